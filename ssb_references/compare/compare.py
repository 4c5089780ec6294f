"""Systems side by side, or one system before and after a change: ``ssb-references compare``.

Each side (a system, or the runs of one system in a date range or in some sessions) is set
against the first one, variable by variable, only where the comparison is fair:

- the same test, model, variant and scale, and the same workload (``Run.workload()``: pixel
  budget, batching, precision, training step, epochs, data, ...) and payload series; the
  data by its fingerprint where runs log one (sites keep it under different paths);
- the same unit;
- an interval and a significance mark only with ``MIN_RUNS`` runs or more on both sides.

The ratio is of geometric means, with Welch's t interval on the logarithms
(``stats.ratio_interval``); it is significant when the interval excludes 1.
"""
import math
import re
import statistics
from dataclasses import dataclass, field

from ssb_contract import perf

from ssb_references.judge import stats
from ssb_references.runs.run import parse_time

#: With fewer runs on a side: no interval and no significance mark (two values give a
#: t interval with one degree of freedom: too wide to mean anything).
MIN_RUNS = 3
#: The tests compared (TimeToAccuracy's figures are scored over a different rule).
TESTS = ('TrainingTest', 'SizeShapeGap')
GAP_TEST = 'SizeShapeGap'
RULES = ('compared only within one test, model, variant and scale, and one workload (model, '
         'pixel budget, batching, precision, training step, epochs, data) and payload '
         'major.minor series; a value only against the same unit; with fewer than '
         f'{MIN_RUNS} runs on a side, no interval and no significance mark')
UUID = re.compile(r'[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}')


class CompareError(Exception):
    pass


@dataclass
class Row:
    side: str
    partition: str
    test: str
    model: str
    variant: str            # '' for the gap's ratios
    scale: str
    variable: str
    unit: str
    values: list
    centre: object = None   # stats.Interval of the side's geometric mean, n >= MIN_RUNS
    ratio: float = None     # geometric mean over the baseline's
    interval: object = None  # stats.Interval of the ratio
    significant: str = ''   # 'yes', 'no', 'n<3', '' (the baseline; values not positive)

    @property
    def n(self):
        return len(self.values)

    @property
    def median(self):
        return statistics.median(self.values)

    @property
    def cv(self):
        if self.n < 2 or statistics.mean(self.values) == 0:
            return None
        return statistics.stdev(self.values) / abs(statistics.mean(self.values))


@dataclass
class Comparison:
    mode: str               # 'systems' or 'before/after'
    sides: list             # labels, the baseline first
    confidence: float
    rows: list = field(default_factory=list)
    left_out: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    described: dict = field(default_factory=dict)   # side -> what it holds


def _of_system(runs, name):
    """Runs of 'system' or 'system:partition'."""
    return [r for r in runs if name in (r.system, r.partition)]


def system_sides(runs, names):
    if len(names) < 2:
        raise CompareError('compare needs at least two --system (or --before and --after)')
    if len(set(names)) != len(names):
        raise CompareError(f'a system named twice: {", ".join(names)}')
    found = sorted({r.system for r in runs} | {r.partition for r in runs})
    sides = {}
    for name in names:
        sides[name] = _of_system(runs, name)
        if not sides[name]:
            raise CompareError(f'no runs of {name!r} in the sources (found: '
                               f'{", ".join(found) or "none"})')
    return sides


def parse_spec(spec):
    """('range', since, until) for 'A..B' (ISO dates, UTC; either end may be left open), or
    ('sessions', {uuid, ...}) for comma-separated session UUIDs."""
    if '..' in spec:
        start, _, end = spec.partition('..')
        since = parse_time(start) if start else None
        until = parse_time(end) if end else None
        if since is not None and until is not None and until <= since:
            raise CompareError(f'{spec!r}: the range ends before it starts')
        return ('range', since, until)
    uuids = [s.strip() for s in spec.split(',') if s.strip()]
    if not uuids or not all(UUID.fullmatch(u) for u in uuids):
        raise CompareError(f'{spec!r} is neither a date range (2027-01-01..2027-02-01) nor '
                           f'comma-separated session UUIDs')
    return ('sessions', set(uuids))


def _in_spec(run, spec):
    if spec[0] == 'range':
        return ((spec[1] is None or run.time >= spec[1]) and
                (spec[2] is None or run.time < spec[2]))
    return run.session in spec[1]


def before_after_sides(runs, before, after, system=None, have_db=False):
    specs = {'before': parse_spec(before), 'after': parse_spec(after)}
    if any(s[0] == 'sessions' for s in specs.values()) and not have_db:
        raise CompareError('session UUIDs need --db (the results database that holds them)')
    stored = {r.session for r in runs}
    for label, spec in specs.items():
        missing = sorted(spec[1] - stored) if spec[0] == 'sessions' else []
        if missing:
            raise CompareError(f'--{label}: no stored session {", ".join(missing)}')
    if system is not None:
        runs = _of_system(runs, system)
        if not runs:
            raise CompareError(f'no runs of {system!r} in the sources')
    sides = {label: [r for r in runs if _in_spec(r, spec)] for label, spec in specs.items()}
    systems = sorted({r.system for rs in sides.values() for r in rs})
    if len(systems) > 1:
        raise CompareError(f'runs of {len(systems)} systems ({", ".join(systems)}): pass '
                           f'--system, before and after are of one system')
    for label, rs in sides.items():
        if not rs:
            raise CompareError(f'no runs {label} ({[before, after][label == "after"]})')
    both = {id(r) for r in sides['before']} & {id(r) for r in sides['after']}
    if both:
        raise CompareError(f'{len(both)} run(s) are both before and after: the sides overlap')
    return sides


# Fairness: which runs are compared with which.

def signature(run):
    """What two runs must share to be compared: their workload and payload series."""
    work = run.workload()
    fingerprint = run.get('dataset_fingerprint')
    if fingerprint and fingerprint != 'unknown':
        work['dataset'] = fingerprint
    return tuple(sorted(work.items())), run.payload_series


def _why(sig, chosen):
    mine, theirs = dict(sig[0]), dict(chosen[0])
    diffs = [f'{k}={mine.get(k, "-")} (compared: {theirs.get(k, "-")})'
             for k in sorted(set(mine) | set(theirs)) if mine.get(k) != theirs.get(k)]
    if sig[1] != chosen[1]:
        diffs.append(f'payload series {sig[1]} (compared: {chosen[1]})')
    return 'another workload: ' + ', '.join(diffs)


def key_of(run, with_partition):
    key = (run.test, run.get('model') or '', run.variant or '', run.get_index('scale'))
    return key + ((run.partition,) if with_partition else ())


def key_text(key):
    test, model, variant, scale = key[:4]
    return '/'.join(str(k) for k in (*key[4:], model, variant or 'gap', scale))


def _choose(per_side, baseline):
    """The signature the most sides share (then the baseline's most frequent, the newest)."""
    score = {}
    for label, rs in per_side.items():
        for r in rs:
            sides, base, total, newest = score.get(signature(r), (set(), 0, 0, 0))
            score[signature(r)] = (sides | {label}, base + (label == baseline), total + 1,
                                   max(newest, r.time))
    return max(score, key=lambda s: (len(score[s][0]), *score[s][1:]))


def _variables(runs, test):
    names = {n for r in runs for n in r.perf}
    return [v for v in perf.perf_vars(test) if v.name in names and not v.spread_of]


def compare(sides, confidence=stats.COMPARE_CONFIDENCE, mode='systems'):
    """A Comparison of ``sides`` ({label: runs}, the baseline first)."""
    labels = list(sides)
    baseline = labels[0]
    result = Comparison(mode, labels, confidence)
    keys = {}
    for label, rs in sides.items():
        for r in rs:
            if r.test in TESTS:
                keys.setdefault(key_of(r, mode != 'systems'), {}).setdefault(label, []).append(r)
    for key in sorted(keys, key=lambda k: [str(x) for x in k]):
        per_side = keys[key]
        for label in list(per_side):
            parts = sorted({r.partition for r in per_side[label]})
            if len(parts) > 1:
                result.left_out.append(f'{label} {key_text(key)}: runs of {len(parts)} '
                                       f'partitions ({", ".join(parts)}): name one, '
                                       f'--system SYSTEM:PARTITION')
                del per_side[label]
        if not per_side:
            continue
        chosen = _choose(per_side, baseline)
        for label, rs in per_side.items():
            odd = {}
            for r in rs:
                if signature(r) != chosen:
                    odd.setdefault(_why(signature(r), chosen), []).append(r)
            for why, out in odd.items():
                result.left_out.append(f'{label} {key_text(key)}: {len(out)} run(s), {why}')
            per_side[label] = [r for r in rs if signature(r) == chosen]
        kept = {label: rs for label, rs in per_side.items() if rs}
        if baseline not in kept or len(kept) < 2:
            why = (f'no {baseline} runs of this workload' if baseline not in kept
                   else 'no other side has this workload')
            result.left_out.append(f'{", ".join(kept)} {key_text(key)}: {why}: '
                                   f'nothing to compare with')
            continue
        _rows(result, key, kept)
    return result


def _rows(result, key, kept):
    test, model, variant, scale = key[:4]
    baseline = result.sides[0]
    for var in _variables([r for rs in kept.values() for r in rs], test):
        values, units = {}, {}
        for label in result.sides:
            pairs = [r.perf[var.name] for r in kept.get(label, []) if var.name in r.perf]
            if pairs:
                values[label] = [v for v, _ in pairs]
                units[label] = sorted({u for _, u in pairs})
        if baseline not in values or len(values) < 2:
            continue
        if len({tuple(u) for u in units.values()}) > 1 or len(units[baseline]) > 1:
            shown = ', '.join(f'{s}: {"/".join(u)}' for s, u in units.items())
            result.left_out.append(f'{key_text(key)} {var.name}: units differ ({shown}): '
                                   f'not compared')
            continue
        base = values[baseline]
        for label, vals in values.items():
            part = next(r.partition for r in kept[label])
            row = Row(label, part, test, model, variant, str(scale), var.name,
                      units[label][0], vals)
            positive = min(vals + base) > 0
            if positive and len(vals) >= 2:
                row.centre = stats.centre_interval(vals, result.confidence)
            if label != baseline and positive:
                row.ratio = math.exp(statistics.mean(map(math.log, vals)) -
                                     statistics.mean(map(math.log, base)))
                if min(len(vals), len(base)) >= MIN_RUNS:
                    row.interval = stats.ratio_interval(vals, base, result.confidence)
                    row.significant = 'yes' if stats.differs(row.interval) else 'no'
                else:
                    row.significant = f'n<{MIN_RUNS}'
            result.rows.append(row)
            if row.n < MIN_RUNS:
                note = (f'{label} {key_text(key)}: {row.n} run(s), fewer than {MIN_RUNS}: '
                        f'no interval, no significance mark')
                if note not in result.notes:
                    result.notes.append(note)
