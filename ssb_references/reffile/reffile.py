"""Reference files: read and check them (refwrite.py builds and writes them).

A file is ReFrame 4.10's external reference format (``reference = {'$ref': FILE}``),
one per system (``<reference dir>/<system>.yaml``), plus a top-level
``ssb-references`` mapping that ReFrame ignores: how and from which runs each
entry was made, and the workload it is for (the tests' hook,
``reframe_tests/references.py``, applies an entry only to runs of that workload). This
module is the one reader of the format, for the tool and the tests::

    TrainingTest:
      $index: [$partition, variant, model]
      generic:default:
        lrfs:
          smallcnn:
            steady_epoch_time: [0.171, null, 0.292, s]    # [value, lower, upper, unit]
    ssb-references:
      system: generic
      entries:
        generic:default/lrfs/smallcnn: {runs: 3, workload: {...}, ...}

Thresholds are ReFrame's: fractions of the value, ``lower`` in [-1, 0] and
``upper`` >= 0 for a positive value (absolute amounts for a value of 0), ``null``
for unbounded. ``update`` copies the previous file to ``history/`` first.
"""
import math
import numbers
import os

import reframe.utility.sanity as sn

from ssb_contract import perf

from ssb_references.reffile import strict_yaml
from ssb_references.runs.run import TEST_NAME, meta_key, normalize

META_KEY = 'ssb-references'
# A setting of the system's file: the gap inputs' largest spread (ssb_contract/perf.py).
NOISE_LIMIT_KEY = 'noise_limit_cv'
# The files live in <reference prefix>/references/: ReFrame's reference prefix
# (general/reference_prefix, $RFM_REFERENCE_PREFIX), else the tests' own directory.
PREFIX_ENV = 'RFM_REFERENCE_PREFIX'
SUBDIR = 'references'
TESTS_DIR = 'reframe_tests'


class RefFileError(Exception):
    pass


def reference_dir(given=None, prefix=None):
    """--reference-dir; else <prefix>/references for ReFrame's reference prefix (given, else
    $RFM_REFERENCE_PREFIX, else reframe_tests/ of the checkout run from)."""
    return given or os.path.join(prefix or os.environ.get(PREFIX_ENV) or TESTS_DIR, SUBDIR)


def relative_path(system):
    """The file of ``system`` under ReFrame's reference prefix: what ``$ref`` names."""
    return os.path.join(SUBDIR, f'{system}.yaml')


def path_for(ref_dir, system):
    return os.path.join(ref_dir, f'{system}.yaml')


def entry_tuple(entry):
    """(value, lower, upper, unit) of an entry ([$xfail, msg, [...]] included)."""
    if entry and entry[0] == '$xfail':
        entry = entry[2]
    value, lower, upper = entry[:3]
    return value, lower, upper, entry[3] if len(entry) > 3 else None


def band(value, lower, upper):
    """The absolute band a value must stay in: ReFrame's own arithmetic."""
    return sn.reference_bounds(value, lower, upper)


class RefFile:
    """The references of one test in one file, flattened: {key tuple: {var: [v, lo, hi, unit]}}."""

    def __init__(self, path, index, entries, meta, test=TEST_NAME):
        self.path = path
        self.index = index
        self.entries = entries
        self.meta = meta
        self.test = test

    def entry_meta(self, key):
        return (self.meta.get('entries') or {}).get(meta_key(self.test, key)) or {}

    def run_key(self, run):
        """A run's key under this file's index."""
        out = []
        for attr in self.index:
            if attr == '$partition':
                out.append(run.partition)
            elif attr == '$system':
                out.append(run.system)
            elif attr == '$environ':
                out.append(run.environ)
            else:
                out.append(run.get_index(attr))
        return tuple(out)

    def workload_differences(self, key, value_of):
        """[(name, value, recorded)] where the entry's workload differs from the values
        ``value_of(name)`` gives (None: the run or test has no such variable)."""
        recorded = self.entry_meta(key).get('workload') or {}
        return [(k, value_of(k), v) for k, v in recorded.items()
                if value_of(k) is not None and normalize(value_of(k)) != normalize(v)]

    def matches_workload(self, key, run):
        """False when the entry records a workload and the run's differs (as the tests decide)."""
        return not self.workload_differences(key, run.get)


def noise_limit(refs):
    """The system's ``noise_limit_cv`` (the file's settings), else the contract's default."""
    return (refs.meta if refs else {}).get(NOISE_LIMIT_KEY, perf.NOISE_LIMIT_CV)


def _is_number(x):
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def check_tuple(where, val):
    """None if ``val`` is a valid reference entry, else what is wrong with it."""
    if isinstance(val, list) and val and val[0] == '$xfail':
        if len(val) != 3 or not isinstance(val[2], list):
            return f'{where}: expected [$xfail, message, [value, lower, upper, unit]], got {val!r}'
        return check_tuple(where, val[2])
    if not isinstance(val, list) or len(val) not in (3, 4):
        return f'{where}: expected [value, lower, upper, unit], got {val!r}'
    ref, lower, upper = val[:3]
    if not _is_number(ref):
        return f'{where}: the value {ref!r} is not a number'
    for name, thres in (('lower', lower), ('upper', upper)):
        if thres is not None and not _is_number(thres):
            return f'{where}: the {name} threshold {thres!r} is neither a number nor null'
    try:
        band(ref, lower, upper)                 # ReFrame's own rules for the thresholds
    except ValueError as err:
        return (f'{where}: {err} for the value {ref} '
                f'(see "The reference file" in docs/references.md)')
    if len(val) == 4 and val[3] is not None and not isinstance(val[3], str):
        return f'{where}: the unit {val[3]!r} is not text'
    return None


def parse(text, path, test=TEST_NAME):
    """A RefFile from YAML text; RefFileError naming ``path`` and the entry otherwise."""
    def bad(msg):
        return RefFileError(f'malformed reference file {path!r}: {msg}')

    try:
        data = strict_yaml.load(text)
    except ValueError as err:
        raise bad(f'not valid YAML: {err}') from None
    if data is None:
        raise bad('the file is empty')
    if not isinstance(data, dict):
        raise bad(f'expected a mapping of test names at the top level, got {type(data).__name__}')
    meta = data.get(META_KEY) or {}
    if not isinstance(meta, dict):
        raise bad(f'{META_KEY!r} must be a mapping')
    limit = meta.get(NOISE_LIMIT_KEY, perf.NOISE_LIMIT_CV)
    if not _is_number(limit) or limit <= 0:
        raise bad(f'{META_KEY}.{NOISE_LIMIT_KEY} must be a positive number, got {limit!r}')
    tree = data.get(test)
    if tree is None:
        return RefFile(path, ['$partition'], {}, meta, test)
    if not isinstance(tree, dict):
        raise bad(f'{test!r} must be a mapping')
    index = tree.get('$index', ['$partition'])
    if (not isinstance(index, list) or not index or
            not all(isinstance(i, str) for i in index)):
        raise bad(f'{test}.$index must be a list of attribute names, got {index!r}')
    entries = {}

    def walk(node, key, depth):
        where = '.'.join([test] + [str(k) for k in key])
        if not isinstance(node, dict):
            raise bad(f'{where}: expected a mapping with one level per $index key '
                      f'{index}, got {node!r}')
        if depth == len(index):
            for var, val in node.items():
                problem = check_tuple(f'{where}.{var}', val)
                if problem:
                    raise bad(problem)
            entries[tuple(key)] = dict(node)
            return
        for k, sub in node.items():
            if depth == 0 and k == '$index':
                continue
            walk(sub, key + [k], depth + 1)

    walk(tree, [], 0)
    return RefFile(path, index, entries, meta, test)


def load(path, test=TEST_NAME):
    """The file's references, or None when there is no file."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as err:
        raise RefFileError(f'cannot read reference file {path!r}: {err}') from None
    return parse(text, path, test)
