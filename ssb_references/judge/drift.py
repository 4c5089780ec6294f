"""Drift: did the newest run of each key move, judged against the history of its workload.

For each key (partition and index attributes, as the reference files key runs), the newest
run is judged against the earlier runs of the same key, **workload and payload series**
(``major.minor``: docs/versions.md), never against runs of another (those are left out, and
the verdict says how many and why):

- with at least ``MIN_HISTORY`` such runs, a value is flagged only when it lies outside the
  Student-t prediction interval of that history at the stated confidence (judge/stats.py) **and**
  differs from the history's mean by more than the variable's practical floor (its
  reference tolerance floors, ssb_contract/perf.py); which side it left by says regressed or
  improved (changed, for counts);
- with fewer, it falls back to the reference file, as ReFrame judges (the band of the
  entry; the mirrored band on the better side for improvements), and says so.

``ssb-references drift`` and ``ssb-acceptance`` both judge with ``judge_runs``.
"""
import collections
from dataclasses import dataclass
from typing import Optional

from ssb_references.judge import stats
from ssb_references.reffile import reffile, rule
from ssb_references.runs.run import key_text
from ssb_references.runs.text import num, table

DRIFTED = ('regressed', 'improved', 'changed')
MIN_HISTORY = 3
DEFAULT_HISTORY = 20           # earlier runs a verdict reads at most, newest first


@dataclass
class Verdict:
    key: tuple
    test: str
    variable: str
    value: Optional[float]
    unit: str
    status: str               # regressed, improved, changed, ok, no runs, no reference
    basis: str                # 'history', 'references' or 'none'
    interval: Optional[stats.Interval] = None
    reference: Optional[list] = None
    note: str = ''
    run: object = None

    def against(self):
        """What the value was judged against, with how sure the verdict is."""
        if self.basis == 'history':
            return f'history {self.interval.text()}'
        if self.basis == 'references':
            value, lower, upper, _ = reffile.entry_tuple(self.reference)
            lo, hi = reffile.band(value, lower, upper)
            return f'reference {num(value)} [{num(lo)}, {num(hi)}]'
        return '-'


def classify(name, m, entry):
    """The status of the value ``m`` against a reference entry."""
    if m is None:
        return 'no runs'
    value, lower, upper, _ = reffile.entry_tuple(entry)
    lo, hi = reffile.band(value, lower, upper)
    pol = rule.policy(name)
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


def practical_change(name, centre):
    """The smallest change worth a verdict: the variable's tolerance floors."""
    pol = rule.policy(name)
    return max(pol.rel_floor * abs(centre), pol.abs_floor)


def against_history(name, value, history, confidence):
    """(status, interval) of ``value`` against at least MIN_HISTORY earlier values."""
    interval = stats.prediction_interval(history, confidence)
    if interval.contains(value) or abs(value - interval.centre) <= practical_change(
            name, interval.centre):
        return 'ok', interval
    better = rule.policy(name).better
    if better == 'exact':
        return 'changed', interval
    worse = value > interval.centre if better == 'lower' else value < interval.centre
    return ('regressed' if worse else 'improved'), interval


def left_out_because(new, other):
    """Why ``other`` (a run of the same key) is no history of ``new``: another payload
    series or another workload; None when it is."""
    if other.payload_series != new.payload_series:
        return f'payload {other.payload_series}, not {new.payload_series}'
    if other.workload() != new.workload():
        return 'another workload'
    return None


def history_of(new, runs, attrs, last=DEFAULT_HISTORY):
    """(the earlier runs of ``new``'s key, workload and payload series, newest ``last`` of
    them; what was left out and why)."""
    same_key = [r for r in runs if r is not new and r.test == new.test
                and r.key(attrs) == new.key(attrs) and r.time < new.time]
    kept, left_out = [], collections.Counter()
    for r in same_key:
        why = left_out_because(new, r)
        if why:
            left_out[why] += 1
        else:
            kept.append(r)
    kept.sort(key=lambda r: r.time)
    return kept[-last:], ', '.join(f'{n} of {why}' for why, n in left_out.items())


def judge_run(new, runs, attrs, refs=None, confidence=stats.DEFAULT_CONFIDENCE,
              last=DEFAULT_HISTORY):
    """A verdict for every performance variable of the run ``new``."""
    history, left_out = history_of(new, runs, attrs, last)
    key = new.key(attrs)
    entries = (refs.entries.get(refs.run_key(new)) if refs is not None
               and refs.matches_workload(refs.run_key(new), new) else None) or {}
    out = []
    for name, (value, unit) in sorted(new.perf.items()):
        pol = rule.policy(name)
        if pol is None or pol.spread_of:
            continue                      # nobody decided about it / moves with its variable
        past = [r.perf[name][0] for r in history if name in r.perf]
        notes = [f'left out {left_out}'] if left_out else []
        if len(past) >= MIN_HISTORY:
            status, interval = against_history(name, value, past, confidence)
            out.append(Verdict(key, new.test, name, value, unit, status, 'history', interval,
                               note='; '.join(notes), run=new))
            continue
        notes.insert(0, f'{len(past)} earlier run(s) of this workload and payload series, '
                        f'{MIN_HISTORY} needed for history')
        if name in entries:
            out.append(Verdict(key, new.test, name, value, unit,
                               classify(name, value, entries[name]), 'references',
                               reference=entries[name], note='; '.join(notes), run=new))
        else:
            out.append(Verdict(key, new.test, name, value, unit, 'no reference', 'none',
                               note='; '.join(notes), run=new))
    return out


def drift(refs, runs, attrs, confidence=stats.DEFAULT_CONFIDENCE, last=DEFAULT_HISTORY):
    """Verdicts on the newest run of every key of these runs (one test), and 'no runs' for
    the reference entries nobody ran."""
    newest = {}
    for r in sorted(runs, key=lambda r: r.time):
        newest[r.key(attrs)] = r
    out = []
    for key in sorted(newest, key=lambda k: [str(x) for x in k]):
        out += judge_run(newest[key], runs, attrs, refs, confidence, last)
    if refs is not None:
        ran = {refs.run_key(r) for r in newest.values()}
        for key, entries in sorted(refs.entries.items(), key=lambda kv: [str(x) for x in kv[0]]):
            if key not in ran:
                out += [Verdict(key, refs.test, name, None, reffile.entry_tuple(e)[3] or '',
                                'no runs', 'references', reference=e)
                        for name, e in entries.items()]
    return out


def render(verdicts, show_all=False):
    shown = [v for v in verdicts if show_all or v.status in DRIFTED]
    return table(['key', 'variable', 'value', 'judged against', 'status', 'note'],
                 [[key_text(v.key), v.variable, f'{num(v.value)} {v.unit}'.strip(), v.against(),
                   v.status, v.note] for v in shown])
