"""README.md starts with the two commands users copy; CI runs the second one as written."""
import os
import re

from conftest import REPO


def readme_commands():
    with open(os.path.join(REPO, 'README.md')) as f:
        return re.findall(r'^```\n(.+)\n```$', f.read(), flags=re.M)[:2]


def test_readme_starts_with_the_two_commands():
    run_suite, run_tests = readme_commands()
    assert run_suite.endswith('reframe -c reframe_tests -r')
    assert run_tests.endswith('pytest')
    assert 'pip install' in run_suite and 'pip install' in run_tests


def test_ci_runs_the_readme_test_command():
    with open(os.path.join(REPO, '.ci', 'run')) as f:
        ci_lines = [line.strip() for line in f]
    assert readme_commands()[1] in ci_lines
