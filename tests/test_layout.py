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
