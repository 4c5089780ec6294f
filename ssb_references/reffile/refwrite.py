"""Build and write reference files (reffile.py reads and checks them): the old file's entries
updated with the proposals, dumped as readable YAML, written atomically and checked by the
reader before they replace the old file, which goes to history/ first."""
import datetime
import os
import shutil

import yaml

from ssb_contract import perf
from ssb_common import atomic

from ssb_references import __version__
from ssb_references.reffile.reffile import (META_KEY, NOISE_LIMIT_KEY, RefFileError, noise_limit,
                                            parse)
from ssb_references.runs.run import TESTS, TEST_NAME, meta_key

HISTORY_DIR = 'history'


def _var_order(name):
    names = list(perf.BY_NAME)
    return (names.index(name) if name in names else len(names), name)


def _nest(entries, test_index):
    tree = {'$index': list(test_index)}
    for key in sorted(entries, key=lambda k: [str(x) for x in k]):
        node = tree
        for k in key[:-1]:
            node = node.setdefault(k, {})
        node[key[-1]] = {v: entries[key][v] for v in sorted(entries[key], key=_var_order)}
    return tree


def build(system, proposals, index, old=None, replace=False, rule=None, now=None,
          test=TEST_NAME, data=None):
    """The new file's data: ``old``'s entries of ``test`` (unless ``replace``) updated with
    ``proposals``, added to ``data`` (the sections of the file's other tests, built before).

    ``proposals`` is {key: propose.KeyProposal}; ``index`` the test attributes
    after ``$partition``.
    """
    full_index = ['$partition'] + list(index)
    entries = {}
    entry_meta = dict((data or {}).get(META_KEY, {}).get('entries') or {})
    if old is not None and not replace and old.entries:
        if list(old.index) != full_index:
            raise RefFileError(f'{old.path}: its {test} $index {old.index} differs from the new '
                               f'one {full_index}: pass --replace to write only the new entries')
        entries.update(old.entries)
        entry_meta.update({k: v for k, v in (old.meta.get('entries') or {}).items()
                           if k in {meta_key(test, key) for key in old.entries}})
    for key, kp in proposals.items():
        entries[key] = {name: p.as_list() for name, p in kp.variables.items()}
        entry_meta[meta_key(test, key)] = kp.meta()
    now = now or datetime.datetime.now(datetime.timezone.utc)
    meta = {
        'system': system,
        NOISE_LIMIT_KEY: noise_limit(old),
        'updated': now.strftime('%Y-%m-%dT%H:%M:%SZ'),
        'tool': f'ssb-references {__version__}',
        'rule': rule or {},
        'entries': dict(sorted(entry_meta.items())),
    }
    sections = {k: v for k, v in (data or {}).items() if k != META_KEY}
    if entries:
        sections[test] = _nest(entries, full_index)
    return {**sections, META_KEY: meta}


HEADER = """\
# Performance references of size-shape-bench on system {system!r}: ReFrame 4.10
# external references (reframe_tests/references.py points each test at its section).
# [value, lower, upper, unit]: thresholds are fractions of the value, null = unbounded.
# Written by `ssb-references update`; see docs/references.md before editing by hand.
"""


class _Dumper(yaml.SafeDumper):
    """Block mappings; lists of plain values (reference entries) on one line."""

    def represent_list(self, data):
        flow = all(not isinstance(x, (list, dict)) for x in data)
        return self.represent_sequence('tag:yaml.org,2002:seq', data, flow_style=flow)


_Dumper.add_representer(list, _Dumper.represent_list)


def dump(data):
    system = data.get(META_KEY, {}).get('system', '?')
    body = yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     width=120, allow_unicode=True)
    return HEADER.format(system=system) + body


def _history_path(path, now):
    base = os.path.splitext(os.path.basename(path))[0]
    hist = os.path.join(os.path.dirname(os.path.abspath(path)), HISTORY_DIR)
    stamp = now.strftime('%Y%m%dT%H%M%SZ')
    candidate = os.path.join(hist, f'{base}.{stamp}.yaml')
    n = 1
    while os.path.exists(candidate):
        candidate = os.path.join(hist, f'{base}.{stamp}.{n}.yaml')
        n += 1
    return candidate


def write(path, text, now=None):
    """Write atomically (temporary file, checked, then renamed over the old one); the old file
    goes to history/.

    Returns the history copy's path, or None when there was no previous file.
    """
    now = now or datetime.datetime.now(datetime.timezone.utc)
    saved = None
    with atomic.file(path, suffix='.tmp', overwrite=True) as tmp:
        with open(tmp, 'w') as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        with open(tmp) as f:
            text = f.read()
        for name in TESTS:
            parse(text, path, name)            # never replace a file with one we cannot read
        if os.path.exists(path):
            saved = _history_path(path, now)
            os.makedirs(os.path.dirname(saved), exist_ok=True)
            shutil.copy2(path, saved)
    return saved
