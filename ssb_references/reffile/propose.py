"""Propose references from runs: a median and thresholds from the spread (see rule.py).

``propose`` refuses, with a message saying what to do, when a key has too few
runs, when runs come from another system, or when a key's runs mix TensorFlow
versions, environments or workloads.
"""
import math
from dataclasses import dataclass, field

from ssb_references.reffile import rule
from ssb_references.runs.run import group, index_attrs, key_text, last, typed


class Refusal(Exception):
    """The runs cannot back a reference; the message says why and what to pass instead."""


@dataclass
class Proposal:
    value: float
    lower: float        # ReFrame lower_thres (fraction, <= 0) or None
    upper: float        # ReFrame upper_thres (fraction, >= 0) or None
    unit: str
    runs: list          # the values it is made of, oldest first
    tolerance: float

    def as_list(self):
        return [self.value, self.lower, self.upper, self.unit]


@dataclass
class KeyProposal:
    key: tuple
    runs: list                           # Run objects, oldest first
    variables: dict = field(default_factory=dict)  # name -> Proposal
    notes: list = field(default_factory=list)

    def meta(self):
        runs = self.runs
        tf_versions = sorted({r.tensorflow_version for r in runs if r.tensorflow_version})
        payloads = sorted({r.payload_version for r in runs if r.payload_version})
        suites = sorted({r.get('suite_version') for r in runs if r.get('suite_version')})
        return {
            'runs': len(runs),
            'first_run': runs[0].when.strftime('%Y-%m-%dT%H:%M:%SZ'),
            'last_run': runs[-1].when.strftime('%Y-%m-%dT%H:%M:%SZ'),
            'jobids': [r.get('jobid') for r in runs],
            'nodes': sorted({r.get('job_nodelist') for r in runs if r.get('job_nodelist')}),
            'environ': runs[-1].environ,
            'tensorflow_version': tf_versions[0] if len(tf_versions) == 1 else tf_versions,
            'payload_version': (payloads[0] if len(payloads) == 1 else payloads) or None,
            'suite_version': (suites[0] if len(suites) == 1 else suites) or None,
            'workload': {k: _yaml_value(v) for k, v in runs[-1].workload().items()},
        }


def _yaml_value(text):
    return typed(text)


def round_sig(x, digits=4):
    if x == 0:
        return 0.0
    return float(f'{x:.{digits}g}')


def round_up(x, digits=3):
    """Round a tolerance up to ``digits`` significant digits: rounding never narrows a band.

    Significant digits, not decimals: a count of 37,000 shapes keeps its +-0.5
    (1.36e-05), and 0.12000000000000001 stays 0.12.
    """
    if x <= 0:
        return 0.0
    scale = 10.0 ** (digits - 1 - math.floor(math.log10(x)))
    return math.ceil(round(x * scale, 6)) / scale


def tolerance(values, centre, pol, spread_factor=rule.SPREAD_FACTOR, followed=None,
              min_tolerance=0.0):
    """The tolerance, a fraction of |centre| (an absolute amount when centre is 0).

    ``followed``: the tolerance of the time this variable is a rate of; the rate's
    tolerance is then that one translated (its own spread is the same noise).
    ``min_tolerance`` raises the floor of times, memory and fractions (not of
    counts, and of rates only through the time they follow).
    """
    if followed is not None:
        return max(pol.rel_floor, followed / (1 + followed))
    floor = pol.rel_floor if pol.better == 'exact' else max(pol.rel_floor, min_tolerance)
    spread = max(abs(v - centre) for v in values)
    if centre == 0:
        return max(pol.abs_floor, spread_factor * spread)
    return max(floor, pol.abs_floor / abs(centre), spread_factor * spread / abs(centre))


def thresholds(centre, t, better):
    """ReFrame's (lower_thres, upper_thres) for tolerance t on the worse side(s)."""
    lower_limit = -1.0 if centre > 0 else None      # ReFrame: lower_thres >= -1 for ref > 0
    upper_limit = 1.0 if centre < 0 else None       # ReFrame: upper_thres <= 1 for ref < 0

    def low(t):
        return -t if lower_limit is None else max(-t, lower_limit)

    def high(t):
        return t if upper_limit is None else min(t, upper_limit)

    t = round_up(t)
    if better == 'lower':
        return None, high(t)
    if better == 'higher':
        return low(t), None
    return low(t), high(t)


def propose_variable(name, values, unit, spread_factor=rule.SPREAD_FACTOR, followed=None,
                     min_tolerance=0.0, tta_aggregate='mlperf'):
    pol = rule.policy(name)
    centre = rule.centre(name, values, tta_aggregate)
    # 4 significant digits, far below any tolerance; counts stay exact.
    centre = float(centre) if pol.better == 'exact' else round_sig(centre)
    t = tolerance(values, centre, pol, spread_factor, followed, min_tolerance)
    lower, upper = thresholds(centre, t, pol.better)
    return Proposal(centre, lower, upper, unit, list(values), t)


def _check_key(key, runs, allow_mixed_versions):
    """Refusal messages for one key's runs (empty when they can back a reference)."""
    problems = []
    versions = {r.tensorflow_version for r in runs}
    if len(versions) > 1 and not allow_mixed_versions:
        problems.append(f'{key_text(key)}: runs mix TensorFlow versions '
                        f'{", ".join(sorted(map(str, versions)))}: select one with --since/--last, '
                        f'or pass --allow-mixed-versions')
    series = {r.payload_series for r in runs}
    if len(series) > 1 and not allow_mixed_versions:
        problems.append(f'{key_text(key)}: runs mix payload versions '
                        f'{", ".join(sorted(map(str, series)))} (major.minor; a new minor version '
                        f'can move the numbers): select one with --since/--last, or pass '
                        f'--allow-mixed-versions')
    environs = {r.environ for r in runs}
    if len(environs) > 1:
        problems.append(f'{key_text(key)}: runs mix environments {", ".join(sorted(environs))}: '
                        f'select one with --environ')
    workloads = {tuple(sorted(r.workload().items())) for r in runs}
    if len(workloads) > 1:
        differing = sorted({k for w in workloads for k, v in w
                            if any(dict(o).get(k) != v for o in workloads)})
        counts = []
        for name in differing:
            values = [r.workload().get(name) for r in runs]
            counts.append(f'{name}: ' + ', '.join(f'{v} ({values.count(v)} runs)'
                                                  for v in dict.fromkeys(values)))
        problems.append(f'{key_text(key)}: runs of different workloads ({"; ".join(counts)}): '
                        f'select one with --where NAME=VALUE or --since/--last')
    return problems


def propose(runs, system, *, min_runs=3, last_n=None, spread_factor=rule.SPREAD_FACTOR,
            allow_mixed_versions=False, skip_incomplete=False, min_tolerance=0.0,
            tta_aggregate='mlperf'):
    """{key: KeyProposal} for the runs of ``system``; raises Refusal.

    ``runs`` are all the runs read; runs of another system are a refusal (select
    them out before, e.g. with --ignore-other-systems).
    """
    if min_runs < 1:
        raise Refusal('--min-runs must be at least 1')
    others = sorted({r.system for r in runs if r.system != system})
    if others:
        raise Refusal(f'the runs read include runs of other systems ({", ".join(others)}) than '
                      f'{system!r}: references are per system; read only {system!r}\'s perflogs, '
                      f'or pass --ignore-other-systems')
    if not runs:
        raise Refusal(f'no runs of system {system!r} were found')
    groups = last(group(runs, index_attrs(runs)), last_n)
    problems, proposals, skipped = [], {}, []
    for key, key_runs in groups.items():
        if len(key_runs) < min_runs:
            msg = (f'{key_text(key)}: {len(key_runs)} run(s), at least {min_runs} needed '
                   f'(run the suite again, or select more with --since/--last)')
            if skip_incomplete:
                skipped.append(msg)
                continue
            problems.append(msg)
            continue
        key_problems = _check_key(key, key_runs, allow_mixed_versions)
        if key_problems:
            problems += key_problems
            continue
        kp = KeyProposal(key, key_runs)
        names = []
        for r in key_runs:
            names += [n for n in r.perf if n not in names]
        # Times first: throughputs follow the steady epoch time's tolerance.
        names.sort(key=lambda n: rule.policy(n) is not None and
                   rule.policy(n).follows is not None)
        for name in names:
            if rule.policy(name) is not None and rule.policy(name).spread_of:
                continue                   # an interval's bound: it moves with its variable
            if rule.policy(name) is None:
                kp.notes.append(f'{name}: no policy (add it to ssb_contract/perf.py PERF_VARS): '
                                f'no reference')
                continue
            measured = [r.perf[name] for r in key_runs if name in r.perf]
            if len(measured) < min_runs:
                kp.notes.append(f'{name}: measured in {len(measured)} of {len(key_runs)} runs: '
                                f'no reference')
                continue
            units = {u for _, u in measured}
            if len(units) > 1:
                problems.append(f'{key_text(key)}: {name} is logged in several units '
                                f'({", ".join(sorted(units))})')
                continue
            follows = rule.policy(name).follows
            followed = kp.variables[follows].tolerance if follows in kp.variables else None
            try:
                kp.variables[name] = propose_variable(name, [v for v, _ in measured],
                                                      units.pop(), spread_factor, followed,
                                                      min_tolerance, tta_aggregate)
            except rule.TooFewRuns as err:
                kp.notes.append(f'{err}: no reference (or pass --tta-aggregate median)')
        proposals[key] = kp
    if problems:
        raise Refusal('cannot propose references for ' + repr(system) + ':\n  ' +
                      '\n  '.join(problems))
    if not proposals:
        raise Refusal(f'no key of system {system!r} has enough runs:\n  ' + '\n  '.join(skipped))
    return proposals, skipped
