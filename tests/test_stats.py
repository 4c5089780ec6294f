"""The interval maths (ssb_references/stats.py) against published t quantiles and scipy, and
the false-alarm rate and power of drift's verdicts on hand-made samples."""
import math

import numpy as np
import pytest
from scipy import stats as sps

from ssb_references.judge import drift, stats


def test_prediction_interval_matches_the_textbook():
    # n=3, mean 11, s=1; t(0.995, 2 df) = 9.9248 (published tables): 11 +- 9.9248 x sqrt(4/3)
    interval = stats.prediction_interval([10.0, 11.0, 12.0], 0.99)
    half = 9.9248 * math.sqrt(4 / 3)
    assert interval.centre == 11 and interval.n == 3
    assert interval.low == pytest.approx(11 - half, abs=1e-3)
    assert interval.high == pytest.approx(11 + half, abs=1e-3)
    # n=5, 95%: t(0.975, 4 df) = 2.7764
    values = [4.0, 9.0, 4.5, 3.0, 6.5]
    interval = stats.prediction_interval(values, 0.95)
    half = 2.7764 * np.std(values, ddof=1) * math.sqrt(1.2)
    assert interval.high == pytest.approx(np.mean(values) + half, rel=1e-4)


def test_ratio_interval_is_welchs_on_the_logarithms():
    lrfs = [32.1, 33.0, 31.2, 32.6, 30.9]
    hrvs = [16.4, 16.9, 15.8, 16.2, 17.0]
    interval = stats.ratio_interval(lrfs, hrvs, 0.95)
    a, b = np.log(lrfs), np.log(hrvs)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    dof = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))  # Welch-Satterthwaite
    half = sps.t.ppf(0.975, dof) * math.sqrt(va + vb)
    diff = a.mean() - b.mean()
    assert interval.centre == pytest.approx(math.exp(diff))
    assert interval.low == pytest.approx(math.exp(diff - half))
    assert interval.high == pytest.approx(math.exp(diff + half))
    assert interval.low < 32 / 16.4 < interval.high


def test_ratio_interval_needs_two_values_a_side():
    assert stats.ratio_interval([1.0], [1.0, 2.0]) is None
    assert stats.ratio_interval([1.0, 0.0], [1.0, 2.0]) is None
    flat = stats.ratio_interval([2.0, 2.0], [1.0, 1.0])
    assert (flat.low, flat.centre, flat.high) == (2.0, 2.0, 2.0)
    with pytest.raises(ValueError, match='confidence'):
        stats.ratio_interval([1.0, 2.0], [1.0, 2.0], 1.0)
    with pytest.raises(ValueError, match='at least 2'):
        stats.prediction_interval([1.0])


def verdicts(rng, shift, trials, n=5, noise=0.05):
    """drift's verdicts on one steady epoch time per trial, after ``n`` unchanged sessions."""
    out = []
    for _ in range(trials):
        history = list(rng.normal(1.0, noise, n))
        value = rng.normal(1.0, noise) * shift
        out.append(drift.against_history('steady_epoch_time', value, history, 0.99)[0])
    return out


def test_unchanged_runs_raise_about_one_alarm_in_a_hundred_and_a_slowdown_is_caught():
    rng = np.random.default_rng(0)
    quiet = verdicts(rng, 1.0, 4000)
    # The interval alone flags 1%; the 10% practical floor removes most of those.
    assert quiet.count('regressed') + quiet.count('improved') <= 0.01 * len(quiet)
    slow = verdicts(rng, 2.0, 500)                 # one core of two: about twice the time
    assert slow.count('regressed') >= 0.95 * len(slow)
    raw = sum(not stats.prediction_interval(list(rng.normal(1, 0.05, 5)), 0.99).contains(
        rng.normal(1, 0.05)) for _ in range(4000)) / 4000
    assert 0.005 < raw < 0.017                      # the interval's own false-alarm rate
