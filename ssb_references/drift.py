"""Drift: variables whose latest runs moved beyond their references' thresholds.

For each referenced variable, the centre of the last N runs (of the entry's
workload: their median, or MLPerf's mean for time to accuracy, see variables.py)
is compared with the band: beyond the worse side is ``regressed``,
beyond the mirrored band on the better side (which ReFrame does not fail) is
``improved``, a count outside its band is ``changed``. Either way the
reference no longer describes the machine.
"""
from dataclasses import dataclass

from . import reffile, variables
from .runs import key_text
from .text import num, table

DRIFTED = ('regressed', 'improved', 'changed')


@dataclass
class Row:
    key: tuple
    variable: str
    reference: list
    recent: list
    status: str
    centre: float = None


def _centre(name, values, tta_aggregate):
    try:
        return variables.centre(name, values, tta_aggregate) if values else None
    except variables.TooFewRuns:
        return None


def classify(name, m, entry):
    """The status of the centre ``m`` of the recent runs against a reference entry."""
    if m is None:
        return 'no runs'
    value, lower, upper, _ = reffile.entry_tuple(entry)
    lo, hi = reffile.band(value, lower, upper)
    pol = variables.policy(name)
    better = pol.better if pol else 'exact'
    if better == 'exact' or (lower is not None and upper is not None):
        if not lo <= m <= hi:
            return 'changed' if better == 'exact' else ('regressed' if (
                (better == 'lower' and m > hi) or (better == 'higher' and m < lo)) else 'improved')
        return 'ok'
    if better == 'lower':
        if m > hi:
            return 'regressed'
        mirrored = value - (hi - value) if upper is not None else -float('inf')
        return 'improved' if m < mirrored else 'ok'
    if m < lo:
        return 'regressed'
    mirrored = value + (value - lo) if lower is not None else float('inf')
    return 'improved' if m > mirrored else 'ok'


def drift(reffile, runs, last_n=3, tta_aggregate='mlperf'):
    """Rows for every referenced variable, and 'no reference' rows for keys without one."""
    groups = {}
    for r in sorted(runs, key=lambda r: r.time):
        key = reffile.run_key(r)
        if reffile.matches_workload(key, r):
            groups.setdefault(key, []).append(r)
    out = []
    for key in sorted(set(reffile.entries) | set(groups), key=lambda k: [str(x) for x in k]):
        recent = groups.get(key, [])[-last_n:]
        entries = reffile.entries.get(key)
        if entries is None:
            for name in sorted({n for r in recent for n in r.perf}):
                out.append(Row(key, name, None, [r.perf[name][0] for r in recent
                                                 if name in r.perf], 'no reference'))
            continue
        for name, entry in entries.items():
            values = [r.perf[name][0] for r in recent if name in r.perf]
            m = _centre(name, values, tta_aggregate)
            out.append(Row(key, name, entry, values, classify(name, m, entry), m))
    return out


def render(rows, show_all=False):
    from .diff import fmt
    shown = [r for r in rows if show_all or r.status in DRIFTED]
    return table(['key', 'variable', 'reference [band]', 'last runs', 'centre', 'status'],
                 [[key_text(r.key), r.variable, fmt(r.reference),
                   ' '.join(num(v) for v in r.recent), num(r.centre), r.status] for r in shown])
