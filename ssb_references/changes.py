"""``ssb-references changes``: the change points of every series over its whole history.

A series is one variable of one key (partition, variant, model, scale) of one test, in one
workload, payload series and unit: the identity ``drift`` judges by (drift.py), so a run of
another workload, payload series or unit is never a point of the same series. Each series
goes through changepoints.detect (E-divisive means with a t-test, Apache Otava's method);
a change must also exceed the variable's absolute floor (payload/contract.py).

Bad input is stated, one line each, never silently merged: a series shorter than the method
needs (named, with its length: left out), records out of time order in a source (sorted),
two runs of one series completed at the same second (a duplicated session: the first kept),
one variable logged in several units (each unit its own series).
"""
import collections
import csv
import datetime
import os
from dataclasses import dataclass

from . import changepoints, drift, variables
from .runs import index_attrs, key_text
from .text import markdown, num

CSV_COLUMNS = ['test', 'key', 'variable', 'unit', 'system_partition', 'date', 'session',
               'mean_before', 'mean_after', 'change_pct', 'pvalue', 'runs_before',
               'runs_after']


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

    def row(self):
        p = self.point
        return [self.test, key_text(self.key[1:]), self.variable, self.unit, self.key[0],
                self.date, self.session, f'{p.mean_before:.6g}', f'{p.mean_after:.6g}',
                f'{p.change * 100:.3g}', f'{p.pvalue:.3g}', self.runs_before, self.runs_after]


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
    series, units = collections.defaultdict(list), collections.defaultdict(set)
    for (test, key, ident), rs in cases.items():
        for r in _deduplicated(rs, lines):
            for name, (_, unit) in r.perf.items():
                pol = variables.policy(name)
                if pol is None or pol.spread_of:
                    continue
                series[(test, key, ident, name, unit)].append(r)
                units[(test, key, name)].add(unit)
    for (test, key, name), found in sorted(units.items(), key=str):
        if len(found) > 1:
            lines.append(f'{test} {key_text(key)} {name}: logged in {len(found)} units '
                         f'({", ".join(sorted(found))}): each unit its own series')
    return dict(series), lines


def find(runs, window=changepoints.WINDOW, max_pvalue=changepoints.MAX_PVALUE,
         min_magnitude=changepoints.MIN_MAGNITUDE):
    """(changes, newest first; series judged; lines on what was left out or set apart)."""
    series, lines = series_of(runs)
    changes, judged = [], 0
    for (test, key, _, name, unit), rs in sorted(series.items(), key=lambda kv: str(kv[0])):
        values = [r.perf[name][0] for r in rs]
        try:
            points = changepoints.detect(values, window, max_pvalue, min_magnitude,
                                         min_absolute=variables.policy(name).abs_floor)
        except changepoints.SeriesError as err:
            lines.append(f'{test} {key_text(key)} {name}: left out: {err}')
            continue
        judged += 1
        bounds = [0] + [p.index for p in points] + [len(rs)]
        for i, p in enumerate(points):
            changes.append(Change(test, key, name, unit, rs[p.index], p,
                                  p.index - bounds[i], bounds[i + 2] - p.index))
    changes.sort(key=lambda c: -c.run.time)
    return changes, judged, lines


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
    better = variables.policy(change.variable).better
    up = change.point.mean_after > change.point.mean_before
    return up if better == 'lower' else (not up if better == 'higher' else True)


def write(out_dir, changes, judged, lines, params):
    """DIR/changes.csv and DIR/changes.md; returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    csv_path, md_path = os.path.join(out_dir, 'changes.csv'), os.path.join(out_dir, 'changes.md')
    with open(csv_path, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        w.writerows(c.row() for c in changes)
    made = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')
    text = ['# size-shape-bench: change points', '',
            f'{len(changes)} change point(s) in {judged} series ({made}). {params}', '']
    if changes:
        text.append(markdown(
            ['variable', 'test', 'key', 'system:partition', 'date', 'session', 'before',
             'after', 'size', 'p-value'],
            [[c.variable, c.test, key_text(c.key[1:]), c.key[0], c.date, c.session or '-',
              f'{num(c.point.mean_before)} {c.unit}', f'{num(c.point.mean_after)} {c.unit}',
              f'{c.point.change * 100:+.1f}%', f'{c.point.pvalue:.2g}'] for c in changes]))
    text += ['', f'## Left out or set apart ({len(lines)})', '']
    text += [f'- {x}' for x in lines] or ['- nothing']
    with open(md_path, 'w') as f:
        f.write('\n'.join(text) + '\n')
    return [csv_path, md_path]


def params_text(window, max_pvalue, min_magnitude):
    return (f'E-divisive means with a t-test (window {window}, p <= {max_pvalue:g}, size >= '
            f'{min_magnitude:.0%} and the variable\'s absolute floor, '
            f'{changepoints.MIN_SEGMENT} runs on each side); docs/references.md.')


RECENT_NIGHTS = 7


def recent_lines(runs, out_dir, nights=RECENT_NIGHTS):
    """Write the change points of ``runs`` into ``out_dir``; the lines of those found in the
    last ``nights`` days before the newest run (ssb-acceptance's summary)."""
    found, judged, lines = find(runs)
    write(out_dir, found, judged, lines, params_text(changepoints.WINDOW,
                                                     changepoints.MAX_PVALUE,
                                                     changepoints.MIN_MAGNITUDE))
    newest = max(r.time for r in runs)
    return [line(c) for c in recent(found, nights, newest)]
