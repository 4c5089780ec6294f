"""The change points of every series of a history of runs, over its whole history.

A series is one variable of one key (partition, variant, model, scale) of one test, in one
workload, payload series and unit: the identity ``drift`` judges by (judge/drift.py), so a
run of another workload, payload series or unit is never a point of the same series. Each
series goes through changepoints.detect (E-divisive means with a t-test, Apache Otava's
method); a change must also exceed the variable's absolute floor (ssb_contract/perf.py).

Bad input is stated, one line each, never silently merged: a series shorter than the method
needs (named, with its length: left out), records out of time order in a source (sorted),
two runs of one series completed at the same second (a duplicated session: the first kept),
one variable logged in several units (each unit its own series).

``ssb-references changes`` (cli/changes_command.py) writes them with report/change_files.py;
``ssb-acceptance`` lists the recent ones (acceptance/recent_changes.py).
"""
import collections
from dataclasses import dataclass
from typing import NamedTuple

from ssb_references.judge import changepoints, drift
from ssb_references.reffile import rule
from ssb_references.runs.run import index_attrs, key_text
from ssb_references.runs.text import num

@dataclass
class Change:
    test: str
    key: tuple
    variable: str
    unit: str
    run: object              # the first run of the new level
    point: changepoints.ChangePoint
    runs_before: int
    runs_after: int

    @property
    def date(self):
        return self.run.when.strftime('%Y-%m-%dT%H:%M:%SZ')

    @property
    def session(self):
        return self.run.session or self.run.get('jobid') or ''


def out_of_order(read):
    """One line per source whose runs of one key (in the order read) go back in time."""
    last, back = {}, collections.Counter()
    for r in read:
        at = (r.source, r.test, r.key(index_attrs([r])))
        if at in last and r.time < last[at]:
            back[r.source] += 1
        last[at] = r.time
    return [f'{source}: {n} record(s) completed before the record of the same test case '
            f'above them: sorted by job completion time' for source, n in back.items()]


def _deduplicated(runs, lines):
    """The runs of one test case and workload, one per completion time."""
    kept, seen = [], {}
    for r in runs:
        if r.time in seen:
            where = (f'both in {r.source}' if r.source == seen[r.time].source
                     else f'{seen[r.time].source} and {r.source}')
            lines.append(f'{r.test} {key_text(r.key(index_attrs([r])))}: two runs completed at '
                         f'{r.when:%Y-%m-%dT%H:%M:%SZ} ({where}): a duplicated session, the '
                         f'first kept')
            continue
        seen[r.time] = r
        kept.append(r)
    return kept


def series_of(runs):
    """({(test, key, workload, payload series, variable, unit): [runs, oldest first]},
    lines on what was set apart and why)."""
    cases, lines = collections.defaultdict(list), []
    for test in sorted({r.test for r in runs}):
        mine = sorted((r for r in runs if r.test == test), key=lambda r: r.time)
        attrs = index_attrs(mine)
        for r in mine:
            ident = (r.payload_series, tuple(sorted(r.workload().items())))
            cases[(test, r.key(attrs), ident)].append(r)
    series, units, pairs_of = collections.defaultdict(list), collections.defaultdict(set), {}
    for (test, key, ident), rs in cases.items():
        alike = collections.defaultdict(list)      # runs by the variables they logged
        for r in _deduplicated(rs, lines):
            alike[_measured(r.perf, pairs_of)].append(r)
        for pairs, group in alike.items():
            for name, unit in pairs:
                series[(test, key, ident, name, unit)].extend(group)
                units[(test, key, name)].add(unit)
        if len(alike) > 1:              # runs that logged other variables: back in time order
            for name, unit in {p for pairs in alike for p in pairs}:
                series[(test, key, ident, name, unit)].sort(key=lambda r: r.time)
    for (test, key, name), found in sorted(units.items(), key=str):
        if len(found) > 1:
            lines.append(f'{test} {key_text(key)} {name}: logged in {len(found)} units '
                         f'({", ".join(sorted(found))}): each unit its own series')
    return dict(series), lines


def _measured(perf, pairs_of):
    """The (variable, unit) pairs of a run's values that are series of their own (not a
    spread or an interval bound), worked out once for every run alike (runs read from a
    perflog share one layout of names and units: runs/compact.py)."""
    layout = getattr(perf, 'layout', None)
    known = pairs_of.get(id(layout)) if layout is not None else None
    if known is None:
        known = tuple((name, unit) for name, (_, unit) in perf.items()
                      if (pol := rule.policy(name)) is not None and not pol.spread_of)
        if layout is not None:
            pairs_of[id(layout)] = known
    return known


class Found(NamedTuple):
    changes: list            # of Change, newest first
    judged: int              # series judged
    notes: list              # of str: what was left out or set apart, and why


def find(runs, window=changepoints.WINDOW, max_pvalue=changepoints.MAX_PVALUE,
         min_magnitude=changepoints.MIN_MAGNITUDE):
    """The change points of every series in ``runs`` (one system's, of any tests), as a
    Found: (changes, newest first; series judged; lines on what was left out or set
    apart)."""
    series, lines = series_of(runs)
    changes, judged = [], 0
    for (test, key, _, name, unit), rs in sorted(series.items(), key=lambda kv: str(kv[0])):
        values = [r.perf[name][0] for r in rs]
        try:
            points = changepoints.detect(values, window, max_pvalue, min_magnitude,
                                         min_absolute=rule.policy(name).abs_floor)
        except changepoints.SeriesError as err:
            lines.append(f'{test} {key_text(key)} {name}: left out: {err}')
            continue
        judged += 1
        bounds = [0] + [p.index for p in points] + [len(rs)]
        for i, p in enumerate(points):
            changes.append(Change(test, key, name, unit, rs[p.index], p,
                                  p.index - bounds[i], bounds[i + 2] - p.index))
    changes.sort(key=lambda c: -c.run.time)
    return Found(changes, judged, lines)


def recent(changes, days, now):
    """The changes whose first run of the new level completed within ``days`` of ``now``."""
    return [c for c in changes if c.run.time >= now - days * 86400]


def line(change):
    """One change as one line of text."""
    p = change.point
    worse = drift.DRIFTED[0] if _worse(change) else drift.DRIFTED[1]
    return (f'{change.test} {key_text(change.key)} {change.variable}: {num(p.mean_before)} -> '
            f'{num(p.mean_after)} {change.unit} ({p.change * 100:+.1f}%, {worse}) from '
            f'{change.date} (session {change.session or "-"}), p={p.pvalue:.2g}')


def _worse(change):
    better = rule.policy(change.variable).better
    up = change.point.mean_after > change.point.mean_before
    return up if better == 'lower' else (not up if better == 'higher' else True)


def params_text(window, max_pvalue, min_magnitude):
    return (f'E-divisive means with a t-test (window {window}, p <= {max_pvalue:g}, size >= '
            f'{min_magnitude:.0%} and the variable\'s absolute floor, '
            f'{changepoints.MIN_SEGMENT} runs on each side); docs/references.md.')
