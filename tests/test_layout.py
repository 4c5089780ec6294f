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


# ssb_references' layers, lowest first: a module imports from its own layer and those before.
LAYERS = ('runs', 'reffile', 'judge', 'report', 'compare', 'cli', 'acceptance')


def imported_modules(path):
    import ast
    tree = ast.parse(open(path, encoding='utf-8').read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f'{node.module}.{a.name}' for a in node.names)
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names)


def test_ssb_references_imports_only_down_its_layers_and_never_the_payload():
    wrong, layered = [], 0
    for path in python_files():
        parts = os.path.relpath(path, REPO).split(os.sep)
        if parts[0] != 'ssb_references':
            continue
        mine = LAYERS.index(parts[1]) if parts[1] in LAYERS else len(LAYERS)
        layered += parts[1] in LAYERS
        for module in imported_modules(path):
            names = module.split('.')
            if names[0] == 'payload':
                wrong.append(f'{"/".join(parts)} imports {module}')
            elif names[0] == 'ssb_references' and len(names) > 1 and names[1] in LAYERS \
                    and LAYERS.index(names[1]) > mine:
                wrong.append(f'{"/".join(parts)} imports {module}, a later layer')
    assert layered > 20 and not wrong, wrong
