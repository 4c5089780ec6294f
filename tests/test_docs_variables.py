"""The documentation names only the ReFrame test variables (``-S``) and performance variables
that the tests have, and every one of them; the links between the documents lead somewhere."""
import ast
import functools
import glob
import importlib
import os
import pkgutil
import re

import pytest
import reframe as rfm

from conftest import REPO
from docs_text import DOCS, FENCE, code_of, doc_name, read, tables
from ssb_contract import perf
from reframe_tests import gap
from ssb_common.reframe_private import variable_default, variable_names

# ReFrame test variables (-S, -P).

SET_VARIABLE = re.compile(r'(?<![\w-])-[SP]\s+(?:(\w+)\.)?([a-z_]\w*)=')
QUALIFIED = re.compile(r'^(\w+)\.(\w+)(?:=.*)?$')
PLAIN = re.compile(r'^(\w+)(?:=.*)?$')


@functools.cache
def suite_classes():
    """{name: class} of every ReFrame test and plugin in reframe_tests/."""
    import reframe_tests
    classes = {}
    for info in pkgutil.iter_modules(reframe_tests.__path__):
        module = importlib.import_module(f'reframe_tests.{info.name}')
        for name, obj in vars(module).items():
            if isinstance(obj, type) and obj.__module__ == module.__name__ and \
                    issubclass(obj, (rfm.RegressionTest, rfm.RegressionTestPlugin)):
                classes[name] = obj
    return classes


def own_variables(cls):
    """The variables ``cls`` declares beyond ReFrame's own."""
    return variable_names(cls) - variable_names(rfm.RegressionTest)


def variable_mentions(path):
    """[(test class or None, variable)] that ``path`` sets with -S or -P, or names in code
    alone (``epochs``, ``SyntheticMAMe.seed=0``)."""
    text = read(path)
    lines, spans, _ = code_of(text)
    found = SET_VARIABLE.findall(text)
    for code in spans + lines:
        qualified, plain = QUALIFIED.match(code), PLAIN.match(code)
        if qualified and qualified[1] in suite_classes():
            found.append(qualified.groups())
        elif plain:
            found.append(('', plain[1]))
    return [(cls or None, name) for cls, name in found]


def metrics_variable_list():
    """{variable: its default as the docs give it, or None}: the list in docs/metrics.md."""
    text = read(os.path.join(REPO, 'docs', 'metrics.md'))
    (item,) = re.findall(r'^- Variables \(`-S NAME=VALUE`\):(.*?)(?=^- )', text, re.M | re.S)
    said = {}
    for match in re.finditer(r'`(\w+)`(?: \(([^()]*(?:\([^()]*\)[^()]*)*)\))?', item):
        first = re.match(r'`([^`]+)`|(\d[\w.]*)', match[2] or '')
        said[match[1]] = (first[1] or first[2]) if first else None
    return said


def test_every_test_variable_the_docs_name_exists():
    classes = suite_classes()
    # ReFrame's own variables are settable too (-S exclusive_access=false, -S time_limit=...).
    every = set(rfm.RegressionTest.var_space).union(*(own_variables(c) for c in classes.values()))
    unknown = []
    for path in DOCS:
        text = read(path)
        for cls, name in SET_VARIABLE.findall(text):
            if name not in every or cls and (cls not in classes or
                                             name not in own_variables(classes[cls])):
                unknown.append(f'{doc_name(path)}: -S {cls + "." if cls else ""}{name}')
        for cls, name in variable_mentions(path):
            if cls and name not in own_variables(classes[cls]):
                unknown.append(f'{doc_name(path)}: {cls}.{name}')
    unknown += [f'metrics.md: {name}' for name in metrics_variable_list() if name not in every]
    assert not unknown, f'test variables the tests do not have: {unknown}'


def test_the_variable_list_gives_the_defaults():
    """docs/metrics.md's list of -S variables: each default it gives is the variable's."""
    from reframe_tests.training import TrainingTest
    said = metrics_variable_list()
    assert {'epochs', 'pixel_budget', 'timing_lock', 'subset'} <= set(said)
    wrong = []
    for name, default in said.items():
        if default is None or name not in variable_names(TrainingTest):
            continue
        value = variable_default(TrainingTest, name)
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        if shown != default:
            wrong.append(f'{name}: docs {default}, code {shown}')
    assert not wrong, wrong


def test_every_test_variable_is_documented():
    mentioned = {m for path in DOCS for m in variable_mentions(path)}
    missing = [f'{name}.{var}' for name, cls in suite_classes().items()
               for var in sorted(own_variables(cls))
               if (name, var) not in mentioned and (None, var) not in mentioned]
    assert not missing, f'test variables no document names: {missing}'


# Performance variables.

def documented_perf_vars(section):
    """The variables of the metrics.md table under ``section`` (first column, all names)."""
    rows = tables(os.path.join(REPO, 'docs', 'metrics.md'))[section]
    assert rows[0][0] == 'variable', section
    return {n for row in rows[1:] for n in re.findall(r'`(\w+)`', row[0])}


def gap_perf_vars():
    """What SizeShapeGap logs: each ratio, and the interval of each per-epoch ratio."""
    return set(gap.RATIOS) | {f'{n}_{end}' for n in gap.PER_EPOCH for end in ('low', 'high')}


def literal_perf_vars():
    """Performance variables the tests name outside the contract (perf_variables['x'])."""
    names = set()
    for path in glob.glob(os.path.join(REPO, 'reframe_tests', '*.py')):
        for node in ast.walk(ast.parse(read(path))):
            if isinstance(node, ast.Subscript) and \
                    getattr(node.value, 'attr', '') == 'perf_variables' and \
                    isinstance(node.slice, ast.Constant):
                names.add(node.slice.value)
    return names


def same(section, logged):
    documented = documented_perf_vars(section)
    assert documented == logged, (f'metrics.md, "{section}": not logged '
                                  f'{sorted(documented - logged)}, not documented '
                                  f'{sorted(logged - documented)}')


def test_each_table_of_performance_variables_is_its_test():
    names = {v.name for v in perf.perf_vars('TrainingTest')}
    same('What a run measures', names)
    same('What the gap means', gap_perf_vars())
    same('What the gap means', {v.name for v in perf.perf_vars('SizeShapeGap')})
    same('Time to accuracy', {v.name for v in perf.perf_vars('TimeToAccuracy')}
         | set(perf.TTA_TRAINING_VARS))
    # What the tests log outside the contract's loop is the contract's too.
    assert literal_perf_vars() and literal_perf_vars() <= names


def test_the_readme_shows_performance_variables_the_tests_log():
    shown = re.findall(r'^P: (\w+):', read(os.path.join(REPO, 'README.md')), re.M)
    assert shown and set(shown) <= set(perf.BY_NAME)


# Links between the documents.

def anchors(path):
    """The anchors GitHub gives the headings of ``path``."""
    text = FENCE.sub('', read(path))
    return {re.sub(r'[^\w\- ]', '', h.strip().lower()).replace(' ', '-')
            for h in re.findall(r'^#+ (.*)$', text, re.M)}


@pytest.mark.parametrize('path', DOCS, ids=doc_name)
def test_every_link_between_documents_resolves(path):
    broken = []
    for target, anchor in re.findall(r'\]\(([^)#\s]*)(?:#([^)\s]+))?\)', FENCE.sub('', read(path))):
        if target.startswith(('http://', 'https://')):
            continue
        linked = os.path.normpath(os.path.join(os.path.dirname(path), target)) if target else path
        if not os.path.exists(linked) or anchor and anchor not in anchors(linked):
            broken.append(f'{target}#{anchor}' if anchor else target)
    assert not broken, f'{doc_name(path)} links to what is not there: {broken}'


# Files of the repository.

REPO_PATH = re.compile(r'`((?:payload|sizeshape_datasets|ssb_references|ssb_common|reframe_tests|'
                       r'site_configs|benchmarks|tests|docs|\.ci)/[\w./-]+?)`')


@pytest.mark.parametrize('path', DOCS, ids=doc_name)
def test_every_file_the_docs_name_exists(path):
    named = set(REPO_PATH.findall(read(path)))
    # '<site>.py', 'mysite.py' and globs stand for a file the reader makes or picks.
    missing = sorted(p for p in named if not re.search(r'[<*]|mysite', p)
                     and not os.path.exists(os.path.join(REPO, p.split(':')[0])))
    assert not missing, f'{doc_name(path)} names files that do not exist: {missing}'
