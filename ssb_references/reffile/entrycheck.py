"""The ``ssb-references`` section of a reference file checked before anything reads it: people
edit these files by hand, and a list where a mapping belongs was a traceback in ``drift``.
reffile.py checks the entries themselves; this checks how they were made."""
import math
import numbers

from ssb_contract import perf

# Shown of a refused value: enough to find it, never a screenful.
SHOWN_CHARS = 60


def shown(value):
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 3] + '...'


def is_number(x):
    """A real, finite number (a bool is none; an int no float holds is none either)."""
    if not isinstance(x, numbers.Real) or isinstance(x, bool):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def _scalar(x):
    return x is None or isinstance(x, (str, bool)) or is_number(x)


def meta_problem(meta, meta_key):
    """None if the section ``meta`` (named ``meta_key``) can be read, else what is wrong, naming
    the entry and the field."""
    entries = meta.get('entries')
    if entries is None:
        return None
    if not isinstance(entries, dict):
        return f'{meta_key}.entries: expected a mapping of entries, got {shown(entries)}'
    for name, entry in entries.items():
        where = f'{meta_key}.entries.{name}'
        if entry is None:
            continue
        if not isinstance(entry, dict):
            return f'{where}: expected a mapping (runs, workload, ...), got {shown(entry)}'
        workload = entry.get('workload')
        if workload is None:
            continue
        if not isinstance(workload, dict):
            return f'{where}.workload: expected a mapping of test variables, got {shown(workload)}'
        for var, value in workload.items():
            if not isinstance(var, str) or not _scalar(value):
                return (f'{where}.workload.{var}: expected a number, text, true/false or null, '
                        f'got {shown(value)}')
    return None


def variable_problem(where, name, unit):
    """None if ``name`` is a performance variable of the suite and ``unit`` (an entry's; None:
    not given) is its unit, else what is wrong: ReFrame would skip a misspelt variable's
    entry, or compare seconds with milliseconds, without a word."""
    var = perf.BY_NAME.get(name)
    if var is None:
        return (f'{where}: no performance variable {shown(name)} in this suite (misspelt? '
                f'docs/metrics.md lists them)')
    if unit is not None and unit != var.unit:
        return f'{where}: the unit {shown(unit)} is not {name}\'s, {var.unit!r}'
    return None
