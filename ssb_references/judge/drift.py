"""Drift: did the newest run of each key move, judged against the history of its workload.

For each key (partition and index attributes, as the reference files key runs), the newest
run is judged against the earlier runs of the same key, **workload and payload series**
(``major.minor``: docs/versions.md), never against runs of another (those are left out, and
the verdict says how many and why):

- with at least ``MIN_HISTORY`` such runs, a value is flagged only when it lies outside the
  Student-t prediction interval of that history, on the log scale (judge/family.py) **and**
  differs from the history's mean by more than the variable's practical floor (its
  reference tolerance floors, ssb_contract/perf.py); which side it left by says regressed or
  improved (changed, for counts). Alone, the interval is at the stated confidence; the
  values of one session or drift are judged together (judge/drift_family.py): Benjamini-Hochberg
  over them, each variable's spread pooled over the system's test cases where they share it;
- with fewer, it falls back to the reference file, as ReFrame judges (the band of the
  entry; the mirrored band on the better side for improvements), and says so.

``ssb-references drift`` and ``ssb-acceptance`` both judge with ``judge_runs``.
"""
import collections
import math
from dataclasses import dataclass
from typing import Optional

from ssb_references.judge import family, stats
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
    past: Optional[list] = None        # the history's values, oldest first
    prediction: Optional[family.Prediction] = None
    detectable: Optional[float] = None  # the smallest flagged change, in the value's unit

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


def band_reach(name, entry):
    """How far a value may move on its worse side before the reference flags it."""
    value, lower, upper, _ = reffile.entry_tuple(entry)
    lo, hi = reffile.band(value, lower, upper)
    better = rule.policy(name).better
    return {'lower': hi - value, 'higher': value - lo}.get(better, max(hi - value, value - lo))


def practical_change(name, centre):
    """The smallest change worth a verdict: the variable's tolerance floors."""
    pol = rule.policy(name)
    return max(pol.rel_floor * abs(centre), pol.abs_floor)


def decide(name, value, prediction, level):
    """(status, interval, smallest flagged change) of ``value`` when a value is flagged at
    the per-value ``level`` (1 - confidence alone; Benjamini-Hochberg's in a family)."""
    low, high = prediction.bounds(level)
    centre = prediction.centre
    interval = stats.Interval(centre, low, high, prediction.n, 1 - level)
    floor = practical_change(name, centre)
    better = rule.policy(name).better
    reach = {'lower': high - centre, 'higher': centre - low}.get(
        better, max(high - centre, centre - low))
    detectable = max(reach, floor)
    if interval.contains(value) or abs(value - centre) <= floor:
        return 'ok', interval, detectable
    if better == 'exact':
        return 'changed', interval, detectable
    worse = value > centre if better == 'lower' else value < centre
    return ('regressed' if worse else 'improved'), interval, detectable


def against_history(name, value, history, confidence):
    """(status, interval) of ``value`` alone against at least MIN_HISTORY earlier values."""
    status, interval, _ = decide(name, value, family.predict(value, history), 1 - confidence)
    return status, interval


def detectable_text(verdict):
    """'+23%': the smallest change on the worse side the verdict would have flagged."""
    if verdict.detectable is None:
        return '-'
    if not math.isfinite(verdict.detectable):
        return 'nothing'                  # the reference bounds only the other side
    better = rule.policy(verdict.variable).better
    sign = {'lower': '+', 'higher': '-'}.get(better, '±')
    centre = verdict.interval.centre if verdict.interval else reffile.entry_tuple(
        verdict.reference)[0]
    if not centre:
        return f'{sign}{num(verdict.detectable)} {verdict.unit}'.strip()
    share = verdict.detectable / abs(centre)
    return f'x{1 + share:.3g}' if share >= 10 else f'{sign}{share * 100:.3g}%'


def left_out_because(new, other, workload=None):
    """Why ``other`` (a run of the same key) is no history of ``new``: another payload
    series or another workload; None when it is. ``workload``: new's, when known."""
    if other.payload_series != new.payload_series:
        return f'payload {other.payload_series}, not {new.payload_series}'
    if other.workload() != (workload if workload is not None else new.workload()):
        return 'another workload'
    return None


def history_of(new, runs, attrs, last=DEFAULT_HISTORY):
    """(the earlier runs of ``new``'s key, workload and payload series, newest ``last`` of
    them; what was left out and why)."""
    key, workload = new.key(attrs), new.workload()
    same_key = [r for r in runs if r is not new and r.test == new.test
                and r.time < new.time and r.key(attrs) == key]
    kept, left_out = [], collections.Counter()
    for r in same_key:
        why = left_out_because(new, r, workload)
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
            prediction = family.predict(value, past)
            status, interval, detectable = decide(name, value, prediction, 1 - confidence)
            out.append(Verdict(key, new.test, name, value, unit, status, 'history', interval,
                               note='; '.join(notes), run=new, past=past,
                               prediction=prediction, detectable=detectable))
            continue
        notes.insert(0, f'{len(past)} earlier run(s) of this workload and payload series, '
                        f'{MIN_HISTORY} needed for history')
        if name in entries:
            out.append(Verdict(key, new.test, name, value, unit,
                               classify(name, value, entries[name]), 'references',
                               reference=entries[name], note='; '.join(notes), run=new,
                               detectable=band_reach(name, entries[name])))
        else:
            out.append(Verdict(key, new.test, name, value, unit, 'no reference', 'none',
                               note='; '.join(notes), run=new))
    return out


def drift(refs, runs, attrs, confidence=stats.DEFAULT_CONFIDENCE, last=DEFAULT_HISTORY):
    """Verdicts on the newest run of every key of these runs (one test), and 'no runs' for
    the reference entries nobody ran."""
    by_key = collections.defaultdict(list)      # each key's runs: history_of reads no other
    for r in sorted(runs, key=lambda r: r.time):
        by_key[r.key(attrs)].append(r)
    newest = {key: rs[-1] for key, rs in by_key.items()}
    out = []
    for key in sorted(newest, key=lambda k: [str(x) for x in k]):
        out += judge_run(newest[key], by_key[key], attrs, refs, confidence, last)
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
    return table(['key', 'variable', 'value', 'judged against', 'detects', 'status', 'note'],
                 [[key_text(v.key), v.variable, f'{num(v.value)} {v.unit}'.strip(), v.against(),
                   detectable_text(v), v.status, v.note] for v in shown])
