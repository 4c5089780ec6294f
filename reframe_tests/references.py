"""The tests' hook into the per-system reference files (format and reader:
ssb_references/reffile/reffile.py, the one home of both).

The files are ReFrame 4.10 external references (``reference = {'$ref': FILE}`` with an
``$index``), written by ``ssb-references update`` (docs/references.md). ReFrame looks
``FILE`` up under its reference prefix (``general/reference_prefix`` in the site
configuration, or ``RFM_REFERENCE_PREFIX``; by default the tests' own directory), so the
file of system S is ``<prefix>/references/S.yaml``. A system without a file runs without
references: its performance is logged, never failed.

An entry's ``ssb-references.entries.<key>.workload`` records the test variables of the
runs behind it (dataset, epochs, batch size, precision, ...); a test whose variables
differ (``-S epochs=3``) is not held to it: ReFrame logs its performance and a
warning says why.
"""
import os

import reframe.core.runtime as rt
from reframe.core.exceptions import ReferenceParseError

from ssb_references.reffile import reffile
from ssb_references.runs.run import meta_key


def reference_prefix(test):
    """Where ReFrame resolves ``$ref``: its reference prefix, else the test's directory."""
    return rt.runtime().get_option('general/0/reference_prefix') or test.prefix


def load(path, test_name):
    """The file's references of ``test_name``, with ReFrame's error for a malformed file."""
    try:
        return reffile.load(path, test_name)
    except reffile.RefFileError as err:
        raise ReferenceParseError(str(err)) from None


def _index_value(test, attr):
    if attr == '$system':
        return test.current_system.name
    if attr == '$partition':
        return test.current_partition.fullname
    if attr == '$environ':
        return test.current_environ.name
    return getattr(test, attr)


def system_file(test):
    """(path, path relative to the reference prefix) of the test's system's file."""
    relative = reffile.relative_path(test.current_system.name)
    return os.path.join(reference_prefix(test), relative), relative


def noise_limit(test):
    """The system's limit on the gap inputs' spread: its file's, else the contract's default."""
    path, _ = system_file(test)
    refs = load(path, type(test).__name__) if os.path.exists(path) else None
    return reffile.noise_limit(refs)


def for_test(test):
    """``{'$ref': FILE}`` for the test's system, or None (no file, no entries, other workload)."""
    path, relative = system_file(test)
    if not os.path.exists(path):
        return None
    name = type(test).__name__
    refs = load(path, name)
    if not refs.entries:
        return None
    for attr in refs.index:
        if not attr.startswith('$') and not hasattr(test, attr):
            raise ReferenceParseError(f'reference file {path!r}: $index key {attr!r} is not an '
                                      f'attribute of {name}')
    key = tuple(_index_value(test, a) for a in refs.index)
    differing = refs.workload_differences(key, lambda k: getattr(test, k, None))
    if differing:
        test.logger.warning(
            f'{test.display_name}: not checked against {path} ({meta_key(name, key)}): it is '
            f'for another workload: ' + ', '.join(f'{k}={v!r} (references: {r!r})'
                                                  for k, v, r in differing))
        return None
    return {'$ref': relative}
