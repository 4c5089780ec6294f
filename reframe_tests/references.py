"""Per-system performance references: ``references/<system>.yaml`` next to this file.

The files are ReFrame 4.10 external references (``reference = {'$ref': FILE}``
with an ``$index``), written by ``ssb-references update`` (docs/references.md).
A system without a file runs without references: its performance is logged,
never failed. ``SSB_REFERENCE_DIR`` points the tests at another directory.

The file's ``ssb-references.entries.<key>.workload`` records the test variables
the runs behind an entry had (dataset, epochs, batch size, ...); a test whose
variables differ (``-S pixel_budget=360k``) is not held to that entry: ReFrame
logs its performance and a warning says why.

Only ReFrame and PyYAML (a ReFrame dependency) are used here, so that the tests
load wherever ReFrame runs.
"""
import math
import numbers
import os

import yaml
from reframe.core.exceptions import ReferenceParseError
from reframe.core.logging import getlogger

ENV_VAR = 'SSB_REFERENCE_DIR'
DEFAULT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'references')
META_KEY = 'ssb-references'


def reference_dir():
    return os.path.abspath(os.environ.get(ENV_VAR) or DEFAULT_DIR)


def reference_file(system):
    return os.path.join(reference_dir(), f'{system}.yaml')


def _number(x):
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def _entry_problem(val):
    if isinstance(val, list) and val and val[0] == '$xfail':
        if len(val) != 3 or not isinstance(val[2], list):
            return f'expected [$xfail, message, [value, lower, upper, unit]], got {val!r}'
        val = val[2]
    if not isinstance(val, list) or len(val) not in (3, 4):
        return f'expected [value, lower, upper, unit], got {val!r}'
    ref, lower, upper = val[:3]
    if not _number(ref):
        return f'the value {ref!r} is not a number'
    if lower is not None and (not _number(lower) or lower > 0 or (ref > 0 and lower < -1)):
        return (f'lower threshold {lower!r}: expected null or a fraction <= 0 '
                f'(>= -1 for a positive value)')
    if upper is not None and (not _number(upper) or upper < 0 or (ref < 0 and upper > 1)):
        return (f'upper threshold {upper!r}: expected null or a fraction >= 0 '
                f'(<= 1 for a negative value)')
    return None


def load(path, test_name):
    """(index, meta) of ``test_name``'s references in ``path`` (index None: none for the test).

    Raises ReferenceParseError naming the file and the entry for anything ReFrame
    would choke on, or silently skip.
    """
    def bad(msg):
        return ReferenceParseError(f'malformed reference file {path!r}: {msg}')

    try:
        with open(path) as f:
            data = yaml.safe_load(f)
    except yaml.YAMLError as err:
        raise bad(f'not valid YAML: {err}') from None
    except OSError as err:
        raise ReferenceParseError(f'cannot read reference file {path!r}: {err}') from None
    if not isinstance(data, dict):
        raise bad('expected a mapping of test names at the top level' if data is not None
                  else 'the file is empty')
    meta = data.get(META_KEY) or {}
    if not isinstance(meta, dict) or not isinstance(meta.get('entries') or {}, dict):
        raise bad(f'{META_KEY!r} must be a mapping, with "entries" a mapping')
    tree = data.get(test_name)
    if tree is None:
        return None, meta
    if not isinstance(tree, dict):
        raise bad(f'{test_name!r} must be a mapping')
    index = tree.get('$index')
    if index is not None and (not isinstance(index, list) or not index or
                              not all(isinstance(i, str) for i in index)):
        raise bad(f'{test_name}.$index must be a list of attribute names, got {index!r}')
    depth = len(index) if index else 1

    def walk(node, where, level):
        if not isinstance(node, dict):
            raise bad(f'{where}: expected a mapping (one level per $index key {index}), '
                      f'got {node!r}')
        for key, sub in node.items():
            if level == 0 and key == '$index':
                continue
            if level == depth:
                problem = _entry_problem(sub)
                if problem:
                    raise bad(f'{where}.{key}: {problem}')
            else:
                walk(sub, f'{where}.{key}', level + 1)

    walk(tree, test_name, 0)
    return index, meta


def _index_value(test, attr):
    if attr == '$system':
        return test.current_system.name
    if attr == '$partition':
        return test.current_partition.fullname
    if attr == '$environ':
        return test.current_environ.name
    return getattr(test, attr)


def for_test(test):
    """``{'$ref': FILE}`` for the test's system, or None (no file, no entries, other workload)."""
    path = reference_file(test.current_system.name)
    if not os.path.exists(path):
        return None
    name = type(test).__name__
    index, meta = load(path, name)
    if index is None:
        return None
    for attr in index:
        if not attr.startswith('$') and not hasattr(test, attr):
            raise ReferenceParseError(f'reference file {path!r}: $index key {attr!r} is not an '
                                      f'attribute of {name}')
    key = '/'.join(str(_index_value(test, a)) for a in index)
    if name != 'TrainingTest':          # as ssb-references keys another test's entries
        key = f'{name}/{key}'
    recorded = ((meta.get('entries') or {}).get(key) or {}).get('workload') or {}
    def text(value):        # as the perflog and the reference file write it
        return ('true' if value else 'false') if isinstance(value, bool) else str(value)

    differing = [f'{k}={getattr(test, k)!r} (references: {v!r})' for k, v in recorded.items()
                 if hasattr(test, k) and text(getattr(test, k)) != text(v)]
    if differing:
        getlogger().warning(f'{test.display_name}: not checked against {path} ({key}): it is '
                            f'for another workload: {", ".join(differing)}')
        return None
    return {'$ref': path}
