"""The tree stays readable: no Python file over MAX_LINES lines, and ruff (its configuration
in pyproject.toml) finds nothing."""
import os
import shutil
import subprocess
import sys

import pytest
from conftest import REPO, python_files

MAX_LINES = 300


def test_no_module_over_the_limit():
    files = python_files()
    assert len(files) > 50                      # the listing found the tree
    long = {os.path.relpath(f, REPO): n for f in files
            if (n := sum(1 for _ in open(f, encoding='utf-8'))) > MAX_LINES}
    assert not long, f'over {MAX_LINES} lines: {long}'


def test_ruff_is_clean():
    ruff = shutil.which('ruff', path=os.path.dirname(sys.executable)) or shutil.which('ruff')
    if ruff is None:
        pytest.fail("ruff is not installed: pip install '.[test]'")
    proc = subprocess.run([ruff, 'check', '--no-cache', '.'], cwd=REPO, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]


def test_the_payload_takes_what_it_uses():
    """Only payload/cli.py sees the command line; the rest takes the frozen settings it
    parsed (payload/settings.py), or their parts."""
    import ast
    import dataclasses

    from payload import cli
    taking_args = []
    for path in python_files():
        rel = os.path.relpath(path, REPO)
        if not rel.startswith('payload' + os.sep) or rel == os.path.join('payload', 'cli.py'):
            continue
        for node in ast.walk(ast.parse(open(path, encoding='utf-8').read())):
            if isinstance(node, (ast.FunctionDef, ast.Lambda)) and \
                    'args' in [a.arg for a in node.args.args + node.args.kwonlyargs]:
                taking_args.append(f'{rel}:{node.lineno}')
    assert not taking_args, taking_args
    settings = cli.parse_args(['--variant', 'hrvs', '--data-dir', 'x'], {})
    for part in (settings, settings.batches, settings.step, settings.data, settings.validation):
        with pytest.raises(dataclasses.FrozenInstanceError):
            part.seed = 1
