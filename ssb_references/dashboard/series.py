"""What the dashboard draws, without drawing it: one ``Series`` per test case (test and
reference key: partition, variant, model, scale), every performance variable of its runs over
time, each value judged as ``drift`` judges it (against the history before it), the
reference band, the failed runs, change points when given, and notes on what cannot be drawn.
"""
import math
from dataclasses import dataclass, field

from ssb_contract import perf

from ssb_references.judge import drift, stats
from ssb_references.reffile import reffile, rule
from ssb_references.runs.run import TESTS, index_attrs, key_text

#: A value's verdict, by code: the status column of the page (colours in page.py).
VERDICTS = ('too little history, no reference', 'ok', 'regressed', 'improved', 'changed',
            'run failed', 'not judged')
NO_HISTORY, FAILED, NOT_JUDGED = 0, 5, 6


@dataclass(frozen=True)
class ChangePoint:
    """A change point of one variable of one series: the interface the change-point command
    fills (issue 34; build.change_points is the hook)."""
    test: str
    key: tuple            # Run.key of the test's index attributes: (partition, variant, ...)
    variable: str
    time: float           # Unix seconds of the first run at the new level
    session: str
    before: float         # mean before the change
    after: float          # mean after it
    size: float           # (after - before) / before
    p: float


@dataclass
class Series:
    test: str
    key: tuple
    runs: list                                        # oldest first
    units: dict = field(default_factory=dict)         # variable -> unit
    values: dict = field(default_factory=dict)        # variable -> [value or nan per run]
    intervals: dict = field(default_factory=dict)     # variable -> ([low], [high]), nan: none
    verdicts: dict = field(default_factory=dict)      # variable -> [VERDICTS code per run]
    references: dict = field(default_factory=dict)    # variable -> (value, low, high)
    changes: list = field(default_factory=list)       # ChangePoint
    notes: list = field(default_factory=list)

    @property
    def system(self):
        return self.runs[0].system

    @property
    def label(self):
        return key_text(self.key)


def failed(run):
    """Whether ReFrame logged the run as failed (sanity, performance or a later stage)."""
    return (run.get('result') or 'pass') not in ('pass', 'xfail')


def judged(name):
    """Whether drift judges the variable (as drift.judge_run: decided about, not a spread)."""
    pol = rule.policy(name)
    return pol is not None and not pol.spread_of


def order(names):
    """The variables in the contract's order, the unknown ones after them by name."""
    known = list(perf.BY_NAME)
    return sorted(names, key=lambda n: (known.index(n) if n in known else len(known), n))


def _value(run, name):
    value = run.perf.get(name, (None,))[0]
    return value if value is not None and math.isfinite(value) else None


def history_groups(runs):
    """Per run, the identity of its history: drift's (drift.left_out_because): the same
    payload series and workload."""
    return [(r.payload_series, tuple(sorted(r.workload().items()))) for r in runs]


def _entries(series, refs):
    """Per run, the reference entries that apply to it ({} where none: drift's rule)."""
    if refs is None:
        return [{}] * len(series.runs)
    key = refs.run_key(series.runs[0])
    entries = refs.entries.get(key) or {}
    return [entries if refs.matches_workload(key, r) else {} for r in series.runs]


def _judge(series, groups, entries, name, confidence, last):
    """Per run, drift's verdict on its value (drift.judge_run): against its history, the
    earlier runs of the key in the same history group, newest ``last`` of them; with fewer
    than drift.MIN_HISTORY values, against its reference entry, if any."""
    low, high, codes = [], [], []
    earlier = {}                        # history group -> its values (None: missing) so far
    for run, group, entry in zip(series.runs, groups, entries):
        same = earlier.setdefault(group, [])
        value = _value(run, name)
        past = [v for v in same[-last:] if v is not None]
        interval, code = None, NO_HISTORY
        if value is not None and len(past) >= drift.MIN_HISTORY:
            status, interval = drift.against_history(name, value, past, confidence)
            code = VERDICTS.index(status)
        elif value is not None and name in entry:
            code = VERDICTS.index(drift.classify(name, value, entry[name]))
        low.append(interval.low if interval else math.nan)
        high.append(interval.high if interval else math.nan)
        codes.append(FAILED if failed(run) else code)
        same.append(value)
    series.intervals[name] = (low, high)
    series.verdicts[name] = codes


def _reference(series, name, refs):
    """(value, low, high) of the reference entry the newest run is judged against, or None."""
    if refs is None:
        return None
    newest = series.runs[-1]
    key = refs.run_key(newest)
    entry = (refs.entries.get(key) or {}).get(name)
    if entry is None or not refs.matches_workload(key, newest):
        return None
    value, lower, upper, _ = reffile.entry_tuple(entry)
    low, high = reffile.band(value, lower, upper)
    return value, low, high


def _notes(series):
    """What a reader must know about the series' values: too few to judge, missing."""
    passed = [r for r in series.runs if not failed(r)]
    measured = sum(bool(r.perf) for r in series.runs)
    if measured == 1:
        series.notes.append('one run measured: no trend and no history interval yet')
    for name in order(series.values):
        present = sum(not math.isnan(v) for v in series.values[name])
        missing = sum(_value(r, name) is None for r in passed)
        if present == 1 and measured > 1:
            series.notes.append(f'{name}: one run has a value: no trend and no history '
                                f'interval yet')
        if missing:
            series.notes.append(f'{name}: no value in {missing} of {len(passed)} passed runs '
                                f'(not measured, or not a finite number)')
    failures = len(series.runs) - len(passed)
    if failures:
        series.notes.append(f'{failures} of {len(series.runs)} runs failed (listed below)')


def build(runs, refs_of, confidence=stats.DEFAULT_CONFIDENCE, last=drift.DEFAULT_HISTORY,
          change_points=()):
    """[Series] of these runs (every system), in the order of the tests and keys.

    ``refs_of(system, test)``: that system's RefFile for the test, or None.
    """
    out = []
    tests = sorted({r.test for r in runs}, key=lambda t: (t not in TESTS, list(TESTS).index(t)
                                                            if t in TESTS else 0, t))
    for test in tests:
        mine = sorted((r for r in runs if r.test == test), key=lambda r: r.time)
        attrs = index_attrs(mine)
        by_key = {}
        for r in mine:
            by_key.setdefault(r.key(attrs), []).append(r)
        for key in sorted(by_key, key=lambda k: [str(x) for x in k]):
            series = Series(test, key, by_key[key])
            names = order({n for r in series.runs for n in r.perf})
            refs = refs_of(series.system, test)
            groups, entries = history_groups(series.runs), _entries(series, refs)
            for name in names:
                series.units[name] = next(r.perf[name][1] for r in series.runs
                                          if name in r.perf)
                series.values[name] = [math.nan if _value(r, name) is None else _value(r, name)
                                       for r in series.runs]
                if judged(name):
                    _judge(series, groups, entries, name, confidence, last)
                else:
                    series.verdicts[name] = [FAILED if failed(r) else NOT_JUDGED
                                             for r in series.runs]
                band = _reference(series, name, refs)
                if band:
                    series.references[name] = band
            series.changes = [c for c in change_points if (c.test, tuple(c.key)) == (test, key)]
            _notes(series)
            out.append(series)
    return out

