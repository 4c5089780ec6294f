"""Many values judged at once: false alarms controlled over the family, and short histories
made useful by a spread that several series share.

- ``benjamini_hochberg``: which of a family's p-values are discoveries at a level ``alpha``
  for the whole family. A session judges a few dozen values and ``compare``
  many rows: judged one by one at 99%, an unchanged machine is flagged somewhere every few
  sessions. With Benjamini-Hochberg, when nothing changed the chance that anything is flagged
  is at most ``alpha`` (its false discovery rate, and its family-wise error when every value
  is unchanged); when several values moved together (a slower machine slows every rate) they
  are found together at a lower cost than with Holm's or Bonferroni's correction;
- ``pooled_log_spread``: the session-to-session spread of several series (one variable on
  each of a system's test cases), on the logarithms, pooled when Bartlett's test does not
  reject that they share it (at ``SHARE_ALPHA``). Three sessions give one series 2 degrees
  of freedom (a 99% prediction interval of +-12 times its spread); four pooled give 8;
- ``log_prediction``: how far a new value lies from its history on the log scale, as a
  p-value and an interval at any level, with the history's own or a pooled spread.
"""
import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
from scipy import special, stats

# Bartlett's test with 3 values a series has little power: a strict threshold keeps spreads
# that differ apart more often (simulated: sessions of 13 variables x 4 test cases, spreads 2%
# to 12%, 3 earlier values: at 0.05, 9% of unchanged sessions had a false alarm; at 0.25, 5%).
SHARE_ALPHA = 0.25


def benjamini_hochberg(pvalues, alpha):
    """(which p-values are discoveries, the per-value level that decided): the largest k with
    p_(k) <= k alpha / m; every p-value at most p_(k) is one. The level is k alpha / m, or
    alpha / m with no discovery (what a lone change had to reach)."""
    m = len(pvalues)
    if not m:
        return [], alpha
    ranked = np.sort(np.asarray(pvalues, dtype=float))
    passing = np.flatnonzero(ranked <= alpha * np.arange(1, m + 1) / m)
    k = int(passing[-1]) + 1 if passing.size else 0
    cut = ranked[k - 1] if k else -1.0
    return [p <= cut for p in pvalues], alpha * max(k, 1) / m


@dataclass(frozen=True)
class Spread:
    sd: float               # of the logarithms
    df: int
    series: int             # how many series it comes from
    share_p: Optional[float] = None    # Bartlett's p-value, when pooled

    def text(self):
        if self.series == 1:
            return f'own spread, {self.df} df'
        return (f'spread pooled over {self.series} series (Bartlett p={self.share_p:.2g}), '
                f'{self.df} df')


def own_log_spread(history):
    logs = np.log(np.asarray(history, dtype=float))
    return Spread(float(np.std(logs, ddof=1)), len(logs) - 1, 1)


def pooled_log_spread(histories, share_alpha=SHARE_ALPHA):
    """The pooled spread of the logarithms of several positive series (each its own mean), or
    None: fewer than two series of at least 2 values, one without spread, or Bartlett's test
    rejects that they share it (p < ``share_alpha``)."""
    logs = [np.log(np.asarray(h, dtype=float)) for h in histories]
    logs = [x for x in logs if len(x) >= 2]
    if len(logs) < 2 or any(np.ptp(x) == 0 for x in logs):
        return None
    share_p = float(stats.bartlett(*logs).pvalue)
    if not share_p >= share_alpha:
        return None
    df = sum(len(x) - 1 for x in logs)
    ss = sum(float(np.sum((x - x.mean()) ** 2)) for x in logs)
    return Spread(math.sqrt(ss / df), df, len(logs), share_p)


@dataclass(frozen=True)
class Prediction:
    centre: float           # the history's geometric mean (its mean, on the linear scale)
    sd: float               # of a new value around it: spread x sqrt(1 + 1/n), of the logs
    df: int
    pvalue: float           # two-sided, of the new value
    spread: Spread
    n: int
    log: bool = True        # False: values that are not all positive, on the linear scale

    def bounds(self, level):
        """(low, high) where a new value falls with probability 1 - level."""
        # scipy.special's ufuncs: the t distribution without rv_continuous's per-call checks
        half = special.stdtrit(self.df, 1 - level / 2) * self.sd if self.sd else 0.0
        if self.log:
            return self.centre * math.exp(-half), self.centre * math.exp(half)
        return self.centre - half, self.centre + half


def _pvalue(distance, sd, df):
    if sd == 0:
        return 1.0 if distance == 0 else 0.0
    return float(2 * special.stdtr(df, -abs(distance) / sd))


def predict(value, history, spread=None):
    """``log_prediction`` for positive values and history; else Student's t on the values
    themselves with the history's own spread (a fraction of 0 has no logarithm)."""
    if value > 0 and min(history) > 0:
        return log_prediction(value, history, spread)
    x = np.asarray(history, dtype=float)
    sd = float(np.std(x, ddof=1)) * math.sqrt(1 + 1 / len(x))
    own = Spread(float(np.std(x, ddof=1)), len(x) - 1, 1)
    return Prediction(float(x.mean()), sd, own.df, _pvalue(value - x.mean(), sd, own.df), own,
                      len(x), log=False)


def log_prediction(value, history, spread=None):
    """A new positive ``value`` against its positive ``history`` (at least 2 values) on the
    log scale: Student's t with the history's own spread, or ``spread`` (pooled)."""
    logs = np.log(np.asarray(history, dtype=float))
    spread = spread or own_log_spread(history)
    centre = float(logs.mean())
    sd = spread.sd * math.sqrt(1 + 1 / len(logs))
    return Prediction(math.exp(centre), sd, spread.df,
                      _pvalue(math.log(value) - centre, sd, spread.df), spread, len(logs))
