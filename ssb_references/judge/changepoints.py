"""Change points of one series: E-divisive means with a Student's t significance test.

The method of Apache Otava (formerly Hunter; Fleming et al., "Hunter: Using Change Point
Detection to Hunt for Performance Regressions", ICPE 2023), written here from its papers on
numpy and scipy (``apache-otava`` 0.8.0 requires ``numpy==2.2.0.*``: pip refuses to install
it beside the numpy 2.4 that TensorFlow brings here, ResolutionImpossible):

- **E-divisive means** (Matteson & James, "A Nonparametric Approach for Multiple Change Point
  Analysis of Multivariate Data", JASA 2014): the candidate split of a stretch ``x[0:n]`` is
  the ``tau`` (with an end ``kappa``) that maximises the energy divergence
  ``Q = m k / (m + k) * (2/(m k) sum|X - Y| - sum|X_i - X_j| / C(m,2) - sum|Y_i - Y_j| / C(k,2))``
  of ``X = x[0:tau]`` and ``Y = x[tau:kappa]`` (alpha = 1); it is split again and again while
  the best candidate is significant;
- **significance** by Student's t-test of the two segments around the candidate, not a
  permutation test: deterministic and fast (Hunter); here its p-value is multiplied by the
  number of places the split was sought in (Bonferroni), since the best of many places
  passes a plain t-test by chance far too often (measured: 9% of 365 points of pure 3%
  noise had a "change" without it; tests/test_changepoints.py);
- **sliding windows** of ``WINDOW`` points, half a window apart, collect "weak" change points
  at ten times the p-value; then the **merge** drops, one at a time, the weakest of them (the
  largest p-value above ``MAX_PVALUE``, else the smallest change below ``MIN_MAGNITUDE``),
  recomputing the others' segments, until every one left passes both.

One difference, on purpose: each side of a change has at least ``MIN_SEGMENT`` points, so one
odd night is an outlier, never a change point of its own.
"""
import math
from dataclasses import dataclass

import numpy as np
from scipy import special

WINDOW = 50              # Otava's default window
MAX_PVALUE = 0.001       # Otava's default p-value
MIN_MAGNITUDE = 0.05     # a change smaller than 5% of the level is not reported
MIN_SEGMENT = 3          # points on each side of a change
MIN_LENGTH = 2 * MIN_SEGMENT


class SeriesError(ValueError):
    """A series the method cannot judge (too short, not finite)."""


@dataclass(frozen=True)
class ChangePoint:
    index: int               # the first point of the new level
    mean_before: float
    mean_after: float
    pvalue: float

    @property
    def change(self):
        """mean after / mean before - 1 (inf from a level of 0)."""
        if self.mean_before == 0:
            return 0.0 if self.mean_after == 0 else math.inf
        return self.mean_after / self.mean_before - 1

    @property
    def magnitude(self):
        """Otava's size of a change: the larger relative change, forwards or backwards, so a
        step up and the same step down weigh alike."""
        if self.mean_after == 0:
            return 0.0 if self.mean_before == 0 else math.inf
        return max(abs(self.change), abs(self.mean_before / self.mean_after - 1))


def checked(values, min_length=MIN_LENGTH):
    """``values`` as a float array; SeriesError when too short or not finite."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 1:
        raise SeriesError(f'a series is one-dimensional, got shape {x.shape}')
    if len(x) < min_length:
        raise SeriesError(f'{len(x)} point(s), the method needs at least {min_length}')
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        raise SeriesError(f'point {bad[0]} is {x[bad[0]]}: every point must be a finite number')
    return x


def best_split(x, min_segment=MIN_SEGMENT):
    """(tau, qhat) maximising the divergence of ``x[:tau]`` and ``x[tau:kappa]`` over every
    ``kappa``, each segment at least ``min_segment`` long; None when ``x`` is too short."""
    n = len(x)
    if n < 2 * min_segment:
        return None
    dist = np.abs(x[:, None] - x[None, :])
    # prefix[i, j] = dist[:i, :j].sum(): any block sum in four look-ups
    prefix = np.zeros((n + 1, n + 1))
    prefix[1:, 1:] = dist.cumsum(0).cumsum(1)
    tau = np.arange(min_segment, n - min_segment + 1)[:, None]
    kappa = np.arange(2 * min_segment, n + 1)[None, :]
    kappa_c = np.maximum(kappa, tau + min_segment)           # valid shapes; masked below
    m, k = tau, kappa_c - tau
    between = prefix[tau, kappa_c] - prefix[tau, tau]
    within_x = prefix[tau, tau] / 2
    within_y = (prefix[kappa_c, kappa_c] - 2 * prefix[tau, kappa_c] + prefix[tau, tau]) / 2
    energy = (2 * between / (m * k) - within_x / (m * (m - 1) / 2)
              - within_y / (k * (k - 1) / 2))
    q = np.where(kappa >= tau + min_segment, m * k / (m + k) * energy, -np.inf)
    i, j = np.unravel_index(np.argmax(q), q.shape)
    return int(tau[i, 0]), float(q[i, j])


def ttest(left, right):
    """(mean left, mean right, two-sided p of Student's t-test with pooled variance): scipy's
    ``ttest_ind`` in closed form, 100 times faster on short segments."""
    nl, nr = len(left), len(right)
    ml, mr = float(np.mean(left)), float(np.mean(right))
    ss = float(np.sum((left - ml) ** 2) + np.sum((right - mr) ** 2))
    if ss == 0:                                   # no noise: any difference is real
        return ml, mr, (1.0 if ml == mr else 0.0)
    df = nl + nr - 2
    t = (ml - mr) / math.sqrt(ss / df * (1 / nl + 1 / nr))
    return ml, mr, float(2 * special.stdtr(df, -abs(t)))


def split_test(x, a, tau, b, min_segment=MIN_SEGMENT):
    """ChangePoint of a split of ``x[a:b]`` at ``tau``: the t-test's p-value times the number
    of places a split was sought in ``x[a:b]`` (Bonferroni): the best of many places looks
    significant by chance far more often than the t-test alone says."""
    before, after, p = ttest(x[a:tau], x[tau:b])
    places = max(b - a - 2 * min_segment + 1, 1)
    return ChangePoint(tau, before, after, min(p * places, 1.0))


def _bounds(points, n):
    return [0] + sorted(points) + [n]


def best_possible_p(y, min_segment=MIN_SEGMENT):
    """The smallest p-value ``split_test`` could give any split of ``y``: the t-test of
    every split at once, from running sums (a window without a chance is left at that)."""
    return float(best_possible_ps(np.asarray(y)[None, :], min_segment)[0])


def best_possible_ps(ys, min_segment=MIN_SEGMENT):
    """best_possible_p of each row of ``ys`` (windows of one length), all at once."""
    n = ys.shape[1]
    if n < 2 * min_segment:
        return np.ones(len(ys))
    left = np.arange(min_segment, n - min_segment + 1)
    sums = np.cumsum(ys, axis=1)[:, left - 1]
    total = ys.sum(axis=1)[:, None]
    mean_l, mean_r = sums / left, (total - sums) / (n - left)
    spread = np.sum((ys - ys.mean(axis=1)[:, None]) ** 2, axis=1)[:, None]
    within = np.maximum(spread - left * (n - left) / n * (mean_l - mean_r) ** 2, 0.0)
    # a noiseless split: let the full test decide
    noiseless = np.any(within <= 1e-12 * np.maximum(np.sum(ys ** 2, axis=1), 1e-300)[:, None],
                       axis=1)
    with np.errstate(divide='ignore', invalid='ignore'):
        t = np.abs(mean_l - mean_r) / np.sqrt(within / (n - 2) * (1 / left + 1 / (n - left)))
    t = np.nan_to_num(t, nan=0.0)          # 0/0 only in a noiseless row, decided above
    places = max(n - 2 * min_segment + 1, 1)
    p = np.minimum(2 * special.stdtr(n - 2, -t.max(axis=1)) * places, 1.0)
    # a constant row (a count that never changed) has no change; another noiseless one may
    return np.where(np.ptp(ys, axis=1) == 0, 1.0, np.where(noiseless, 0.0, p))


def divisive(x, max_pvalue, min_segment=MIN_SEGMENT):
    """Change points of one window ``x`` (Matteson & James's recursion, t-test significance):
    the best candidate of all current segments is tested against the two segments it
    splits; the first that is not significant stops the search."""
    points = []
    while True:
        bounds = _bounds(points, len(x))
        spans = [(a, b) for a, b in zip(bounds, bounds[1:])
                 if best_possible_p(x[a:b], min_segment) <= max_pvalue]
        best = None
        for a, b in spans:
            found = best_split(x[a:b], min_segment)
            if found and (best is None or found[1] > best[1]):
                best = (a + found[0], found[1], a, b)
        if best is None:
            return points
        tau, _, a, b = best
        if split_test(x, a, tau, b, min_segment).pvalue > max_pvalue:
            return points
        points.append(tau)


def hopeless(x, window, step, max_pvalue, min_segment=MIN_SEGMENT):
    """The starts of the full windows on the grid ``0, step, 2 step, ...`` no split of which
    could pass, screened all at once (on noise alone that is nearly every window)."""
    if len(x) < window:
        return set()
    starts = np.arange(0, len(x) - window + 1, step)
    ys = np.lib.stride_tricks.sliding_window_view(x, window)[starts]
    return set(starts[best_possible_ps(ys, min_segment) > max_pvalue].tolist())


def weak_points(x, window, max_pvalue, min_segment=MIN_SEGMENT):
    """The union of every sliding window's change points (windows half a window apart; after
    a change the next window starts at it)."""
    found, start, step = set(), 0, max(window // 2, 1)
    skip = hopeless(x, window, step, max_pvalue, min_segment)
    while True:
        end = min(start + window, len(x))
        new = [] if start in skip and end - start == window else [
            start + p for p in divisive(x[start:end], max_pvalue, min_segment)]
        found.update(new)
        if end == len(x):
            return sorted(found)
        start = max([start + step] + new)


def _measured(x, points, min_segment):
    bounds = _bounds(points, len(x))
    return [split_test(x, a, p, b, min_segment)
            for a, p, b in zip(bounds, bounds[1:], bounds[2:])]


def merge(x, points, max_pvalue, min_magnitude, min_absolute=0.0, min_segment=MIN_SEGMENT):
    """Drop the weakest point until all pass: the largest p-value above ``max_pvalue``, else
    the smallest change below ``min_magnitude`` (or below ``min_absolute`` in the series'
    own unit); each removal re-measures the rest on their new segments."""
    points = sorted(points)
    while points:
        measured = _measured(x, points, min_segment)
        weakest = max(measured, key=lambda c: c.pvalue)
        if weakest.pvalue <= max_pvalue:
            weakest = min(measured, key=lambda c: c.magnitude)
            small = [c for c in measured if abs(c.mean_after - c.mean_before) <= min_absolute]
            if small:
                weakest = min(small, key=lambda c: abs(c.mean_after - c.mean_before))
            elif weakest.magnitude >= min_magnitude:
                return measured
        points.remove(weakest.index)
    return []


def detect(values, window=WINDOW, max_pvalue=MAX_PVALUE, min_magnitude=MIN_MAGNITUDE,
           min_absolute=0.0, min_segment=MIN_SEGMENT):
    """The change points of ``values`` (oldest first), as ChangePoint, oldest first.

    SeriesError when the series is shorter than ``2 * min_segment`` or holds a value that is
    not a finite number."""
    if window < 2 * min_segment:
        raise ValueError(f'the window ({window}) must hold two segments of {min_segment}')
    if not 0 < max_pvalue < 1:
        raise ValueError(f'the p-value must be between 0 and 1, got {max_pvalue}')
    x = checked(values, 2 * min_segment)
    first_pass = max_pvalue * 10 if max_pvalue < 0.05 else min(max_pvalue * 2, 1.0)
    weak = weak_points(x, window, first_pass, min_segment)
    return merge(x, weak, max_pvalue, min_magnitude, min_absolute, min_segment)
