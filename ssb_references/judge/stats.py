"""The interval maths of the suite, in one place: scipy's distributions, no hand-written tables.

- ``ratio_interval``: the ratio of two sets of rates (the gap test's HR&VS over LR&FS),
  with Welch's t interval on their logarithms;
- ``prediction_interval``: where one new session's value should fall, given the stored
  sessions of the same workload (Student-t, n - 1 degrees of freedom);
- ``centre_interval`` and ``differs``: one side's geometric mean with its t interval, and
  whether a ratio's interval excludes 1 (``compare``: two systems, or before and after).
"""
import math
import statistics
from dataclasses import dataclass

from scipy import stats

DEFAULT_CONFIDENCE = 0.99      # drift verdicts: about 1 false alarm per 100 unchanged values
GAP_CONFIDENCE = 0.95          # the gap's intervals
COMPARE_CONFIDENCE = 0.95      # systems side by side, before and after


@dataclass(frozen=True)
class Interval:
    centre: float
    low: float
    high: float
    n: int
    confidence: float

    def contains(self, x):
        return self.low <= x <= self.high

    def text(self, digits=4):
        return (f'{self.centre:.{digits}g} [{self.low:.{digits}g}, {self.high:.{digits}g}] '
                f'({percent(self.confidence)}, n={self.n})')


def percent(confidence):
    """'99%', '99.9%': a confidence as people write it."""
    return f'{confidence * 100:g}%'


def _check(confidence):
    if not 0 < confidence < 1:
        raise ValueError(f'confidence must be between 0 and 1 (exclusive), got {confidence}')


def ratio_interval(numerator, denominator, confidence=GAP_CONFIDENCE):
    """The ratio of the geometric means of two samples of positive values, with Welch's t
    interval (unequal variances) on the difference of their mean logarithms, transformed
    back. None with fewer than two values on a side or a non-positive value."""
    _check(confidence)
    num, den = list(numerator), list(denominator)
    if min(len(num), len(den)) < 2 or min(num + den) <= 0:
        return None
    log_num, log_den = [math.log(x) for x in num], [math.log(x) for x in den]
    centre = math.exp(statistics.mean(log_num) - statistics.mean(log_den))
    if statistics.variance(log_num) == 0 and statistics.variance(log_den) == 0:
        return Interval(centre, centre, centre, min(len(num), len(den)), confidence)
    ci = stats.ttest_ind(log_num, log_den, equal_var=False).confidence_interval(confidence)
    return Interval(centre, math.exp(ci.low), math.exp(ci.high), min(len(num), len(den)),
                    confidence)


def centre_interval(values, confidence=COMPARE_CONFIDENCE):
    """The geometric mean of positive values with its Student-t interval (n - 1 degrees of
    freedom, on the logarithms): the scale ``ratio_interval`` works on. None with fewer than
    two values or a non-positive one."""
    _check(confidence)
    values = list(values)
    if len(values) < 2 or min(values) <= 0:
        return None
    logs = [math.log(x) for x in values]
    mean, sd = statistics.mean(logs), statistics.stdev(logs)
    if sd == 0:
        low = high = mean
    else:
        low, high = stats.t.interval(confidence, len(logs) - 1, loc=mean,
                                     scale=sd / math.sqrt(len(logs)))
    return Interval(math.exp(mean), math.exp(low), math.exp(high), len(values), confidence)


def differs(interval):
    """Whether a ratio's interval excludes 1: Welch's test rejects "no difference" at
    1 - confidence (two-sided). A flat pair of samples differs when its ratio is not 1."""
    return interval is not None and not interval.contains(1.0)


def prediction_interval(history, confidence=DEFAULT_CONFIDENCE):
    """Where a new value from the same distribution as ``history`` falls with probability
    ``confidence``: mean +- t(n-1) * s * sqrt(1 + 1/n). Needs at least 2 values (the
    verdicts ask for 3: see MIN_HISTORY in drift.py)."""
    _check(confidence)
    values = list(history)
    n = len(values)
    if n < 2:
        raise ValueError(f'a prediction interval needs at least 2 values, got {n}')
    mean, sd = statistics.mean(values), statistics.stdev(values)
    half = stats.t.ppf((1 + confidence) / 2, n - 1) * sd * math.sqrt(1 + 1 / n)
    return Interval(mean, mean - half, mean + half, n, confidence)

