"""Runs checked before they count: one record must not decide a verdict. A run repeated in
the data (the same job or session with the same values) counts once; a run from the future
(beyond the clock skew allowed between nodes) would stay "the newest run" for a year; a
value that is not finite, that overflows the statistics or that no measurement can give (a
negative time) would widen or shift every interval it enters. Each is left out with one
warning line; the verdict is computed on the rest."""
import collections
import dataclasses
import datetime
import math
import time

from ssb_contract import perf

from ssb_references.runs import compact, notices

# Nodes' clocks differ by seconds, NTP-less ones by minutes: later than this is a wrong date.
CLOCK_SKEW_S = 600
# A value whose square is infinite overflows the variance: no measurement here comes close.
LARGEST = 1e150
# The one measured variable that may be negative: a first epoch faster than the steady ones.
MAY_BE_NEGATIVE = {'first_epoch_overhead'}


def value_problem(name, value):
    """Why ``value`` of the variable ``name`` cannot count, or None."""
    if not math.isfinite(value):
        return 'not finite'
    if abs(value) > LARGEST:
        return f'beyond {LARGEST:g}: it would overflow the statistics'
    if value < 0 and name in perf.BY_NAME and name not in MAY_BE_NEGATIVE:
        return 'negative: no measurement gives that'
    return None


def _job(run):
    """The job (or stored session) of a run, in one kind of source (a run in a perflog and in
    the results database is sources.read_all's to merge, without a warning)."""
    job = run.get('jobid') or run.session
    return (bool(run.session), run.test, run.partition, job) if job else None


def _same(a, b):
    """Two records of one job are the same run when all their values are (test variables
    too: another workload's record under the same job id is another run). The measured
    values first: they differ between any two real runs, and cost the least to compare."""
    return a.perf == b.perf and dict(a.fields) == dict(b.fields)


def _bad_values(measured):
    """{variable: why} of a run's ``measured`` values (its perf) that cannot count
    (value_problem)."""
    numbers = (measured.numbers() if isinstance(measured, compact.Perf) else
               [v for v, _ in measured.values()])
    # The usual record, all values plain and positive, is cleared in one pass in C.
    if numbers and min(numbers) >= 0 and max(numbers) <= LARGEST and math.isfinite(
            sum(numbers)):
        return {}
    return {name: why for name, (value, _) in measured.items()
            if (why := value_problem(name, value))}


def _stamp(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime(
        '%Y-%m-%dT%H:%M:%SZ')


def checked(runs, now=None):
    """``runs`` without repeats, runs from the future and impossible values (the run's other
    values still count); one warning for each kind of problem in each source."""
    now = time.time() if now is None else now
    warnings = collections.Counter()
    seen, kept = {}, []
    for run in runs:
        if run.time > now + CLOCK_SKEW_S:
            warnings[(run.source, f'a run completed at {_stamp(run.time)}, in the future '
                                  f'beyond the {CLOCK_SKEW_S} s of clock skew allowed: left '
                                  f'out (job {run.get("jobid") or run.session or "?"})')] += 1
            continue
        job = _job(run)
        if job is not None:
            earlier = seen.setdefault(job, [])      # values compared only within one job
            if any(_same(run, other) for other in earlier):
                warnings[(run.source, 'the same run (same job or session, same values) more '
                                      'than once: counted once')] += 1
                continue
            earlier.append(run)
        bad = _bad_values(run.perf)
        for name, why in bad.items():
            warnings[(run.source, f'{name} {why}: that value left out')] += 1
        if bad:
            run = dataclasses.replace(run, perf={n: v for n, v in run.perf.items()
                                                 if n not in bad})
        kept.append(run)
    for (source, text), n in warnings.items():
        notices.warn(f'{source}: {text}' + (f' ({n} records)' if n > 1 else ''))
    return kept
