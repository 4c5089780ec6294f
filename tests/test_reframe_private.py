"""ReFrame's internals are reached from one module, ssb_common/reframe_private.py, on the ReFrame
versions setup.cfg pins: a ReFrame upgrade fails here first, loudly, not in a site's run."""
import ast
import configparser
import importlib.metadata
import os

import pytest
from packaging.requirements import Requirement
from reframe.core.pipeline import RegressionTest

from conftest import REPO, python_files
from reframe_tests.training import TrainingTest
from ssb_common import reframe_private

ADAPTER = os.path.join(REPO, 'ssb_common', 'reframe_private.py')
# ReFrame 4.10's documented Python interfaces: the modules of its "Test API Reference",
# "Utility Functions" and "ReFrame Errors" pages.
DOCUMENTED_MODULES = {
    'reframe', 'reframe.core.builtins', 'reframe.core.buildsystems', 'reframe.core.containers',
    'reframe.core.decorators', 'reframe.core.environments', 'reframe.core.exceptions',
    'reframe.core.launchers', 'reframe.core.meta', 'reframe.core.modules',
    'reframe.core.pipeline', 'reframe.core.runtime', 'reframe.core.schedulers',
    'reframe.core.systems', 'reframe.utility', 'reframe.utility.osext',
    'reframe.utility.sanity', 'reframe.utility.typecheck', 'reframe.utility.udeps',
}
# Modules of which only some names are documented.
DOCUMENTED_NAMES = {'reframe.core.backends': {'getlauncher', 'getscheduler'}}
# What the reference documents of the ``reframe`` package itself (and pipeline's test bases).
DOCUMENTED_TOP = {'simple_test', 'RegressionTest', 'RunOnlyRegressionTest',
                  'CompileOnlyRegressionTest', 'RegressionMixin', 'RegressionTestPlugin'}


def pinned_reframe():
    setup = configparser.ConfigParser()
    setup.read(os.path.join(REPO, 'setup.cfg'))
    (line,) = [r for r in setup['options']['install_requires'].split('\n')
               if r.strip().startswith('reframe-hpc')]
    return Requirement(line.strip())


def test_the_installed_reframe_is_one_the_suite_supports():
    pinned = pinned_reframe()
    installed = importlib.metadata.version('reframe-hpc')
    assert pinned.specifier.contains(installed, prereleases=True), (
        f'ReFrame {installed} is installed; setup.cfg pins {pinned}: check every access '
        f'of ssb_common/reframe_private.py on it (this file), then widen the pin')
    # One minor series: minor releases change internals, and the adapter is tested on one.
    major, minor = installed.split('.')[:2]
    assert not pinned.specifier.contains(f'{major}.{int(minor) + 1}.0'), pinned


def test_the_builtin_perflog_handler_is_a_filelog_with_every_variable():
    handler = reframe_private.builtin_perflog_handler()
    assert handler['type'] == 'filelog'
    assert handler['format'].startswith('%(check_result)s|')
    assert '%(check_#ALL)s' in handler['format']
    assert 'check_executable' in handler['ignore_keys']
    handler['ignore_keys'].clear()                      # a copy: ReFrame's own is untouched
    assert reframe_private.builtin_perflog_handler()['ignore_keys']


def test_the_configuration_keys_are_the_schemas():
    keys = reframe_private.config_keys()
    assert {'name', 'hostnames', 'partitions', 'modules_system'} <= keys['system']
    assert {'scheduler', 'launcher', 'access', 'extras', 'resources', 'devices',
            'processor', 'container_platforms', 'env_vars'} <= keys['partition']
    assert {'num_cpus', 'num_sockets'} <= keys['processor']
    assert keys['device'] == {'type', 'arch', 'model', 'num_devices'}
    assert keys['resource'] == {'name', 'options'}
    assert {'name', 'modules', 'features', 'extras', 'target_systems'} <= keys['environment']


@pytest.mark.parametrize('kind, some', [('scheduler', {'local', 'slurm', 'squeue', 'pbs'}),
                                        ('launcher', {'local', 'srun', 'mpirun', 'mpiexec'})])
def test_the_backend_names_are_reframes(kind, some):
    names = reframe_private.backend_names(kind)
    assert some <= set(names) and names == sorted(names)


def test_a_test_classes_variables_and_parameters():
    variables = reframe_private.variable_names(TrainingTest)
    assert {'epochs', 'models', 'stage_dir'} <= variables
    assert {'num_tasks', 'valid_systems'} <= reframe_private.variable_names(RegressionTest)
    assert {'variant', 'model', 'scale', 'device'} <= set(
        reframe_private.parameter_names(TrainingTest))
    assert reframe_private.variable_default(TrainingTest, 'timing_lock') is True
    assert reframe_private.parameter_values(TrainingTest, 'device') == ('cpu', 'gpu')


def test_only_the_adapter_reads_a_test_classes_spaces():
    """var_space and param_space are the metaclass's, not ReFrame's documented interface: the
    tests, too, ask the adapter."""
    this = os.path.abspath(__file__)
    found = [os.path.relpath(path, REPO) for path in python_files() if path not in (ADAPTER, this)
             and any(name in open(path).read() for name in ('var_space', 'param_space'))]
    assert not found, found


def test_a_failed_access_names_what_and_the_pin():
    with pytest.raises(reframe_private.UnsupportedReframe,
                       match='variable space .* ReFrame 4.* setup.cfg pins'):
        reframe_private.variable_names(object)


def _is_module(name):
    return name in DOCUMENTED_MODULES or name in DOCUMENTED_NAMES


def _is_package(name):
    return any(m.startswith(name + '.') for m in (*DOCUMENTED_MODULES, *DOCUMENTED_NAMES))


def _reframe_uses(tree):
    """(line, module, name or None) of every ReFrame module imported, and of every name
    imported from or looked up in one."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split('.')[0] == 'reframe':
                    yield node.lineno, a.name, None
                    aliases[a.asname or 'reframe'] = a.name if a.asname else 'reframe'
        elif isinstance(node, ast.ImportFrom) and (node.module or '').split('.')[0] == 'reframe':
            for a in node.names:
                full = f'{node.module}.{a.name}'
                if _is_module(full):
                    yield node.lineno, full, None
                    aliases[a.asname or a.name] = full
                else:
                    yield node.lineno, node.module, a.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in aliases:
            module = aliases[node.value.id]
            if not _is_package(f'{module}.{node.attr}'):      # reframe.core.x: an import
                yield node.lineno, module, node.attr


def _undocumented(module, name):
    if name is None:
        return module not in DOCUMENTED_MODULES and module not in DOCUMENTED_NAMES
    if name.startswith('_'):
        return True
    if module in DOCUMENTED_NAMES:
        return name not in DOCUMENTED_NAMES[module]
    if module == 'reframe':
        return name not in DOCUMENTED_TOP and not _is_module(f'reframe.{name}')
    return module not in DOCUMENTED_MODULES


def test_no_module_but_the_adapter_uses_reframes_internals():
    found = []
    files = python_files()
    assert ADAPTER in files and len(files) > 50                 # the listing found the tree
    for path in files:
        if path == ADAPTER:
            continue
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        found += [f'{os.path.relpath(path, REPO)}:{line}: {module}' + (f'.{name}' if name else '')
                  for line, module, name in _reframe_uses(tree) if _undocumented(module, name)]
    assert not found, 'not documented by ReFrame; use ssb_common/reframe_private.py:\n' + \
        '\n'.join(found)


def test_the_check_finds_what_it_looks_for():
    """The import check above can fail: each kind of internal use is caught."""
    source = '\n'.join([
        'import reframe', 'import reframe.core.settings', 'import reframe.core.runtime as rt',
        'from reframe.core.logging import getlogger', 'from reframe.core import backends',
        'from reframe.core.backends import getscheduler, _schedulers', 'backends._launchers',
        'reframe.INSTALL_PREFIX', 'rt._runtime', 'reframe.simple_test', 'rt.runtime()',
        'reframe.utility.sanity.assert_true'])
    caught = {f'{m}.{n}' if n else m for _, m, n in _reframe_uses(ast.parse(source))
              if _undocumented(m, n)}
    assert caught == {'reframe.core.settings', 'reframe.core.logging.getlogger',
                      'reframe.core.backends._schedulers', 'reframe.core.backends._launchers',
                      'reframe.INSTALL_PREFIX', 'reframe.core.runtime._runtime'}
