"""The rows of one ``compare`` judged together, not one by one.

Judged one by one at 95%, one unchanged row in twenty is marked by chance, and a comparison
has dozens: identical partitions came out "different". Here each row's p-value (Welch's
test on the logarithms, the ``ratio_interval`` maths) goes through Benjamini-Hochberg at
1 - confidence over all the rows with an interval (judge/family.py), and each ratio's interval
is drawn at the per-row level that decided (Benjamini and Yekutieli's false coverage rate
intervals): a marked ratio's interval excludes 1, an unmarked one's holds it.
"""
import numpy as np
from scipy import stats as sps

from ssb_references.judge import family, stats


def welch_p(values, base):
    """Two-sided p-value of Welch's test on the logarithms; a pair of flat samples differs
    when their values do."""
    a, b = np.log(values), np.log(base)
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        return 1.0 if a[0] == b[0] else 0.0
    return float(sps.ttest_ind(a, b, equal_var=False).pvalue)


def judge_rows(result):
    """Mark ``result``'s rows (compare.Comparison) as one family; sets ``row_level``."""
    base = {(r.test, r.model, r.variant, r.scale, r.variable): r.values
            for r in result.rows if r.side == result.sides[0]}
    tested = [r for r in result.rows if r.interval is not None]
    pvalues = [welch_p(r.values, base[(r.test, r.model, r.variant, r.scale, r.variable)])
               for r in tested]
    found, level = family.benjamini_hochberg(pvalues, 1 - result.confidence)
    for row, discovery in zip(tested, found):
        values = base[(row.test, row.model, row.variant, row.scale, row.variable)]
        row.interval = stats.ratio_interval(row.values, values, 1 - level)
        row.significant = 'yes' if discovery else 'no'
    result.row_level = level if tested else None
    return result


def level_text(result):
    """How the rows were judged, for compare.md."""
    if result.row_level is None:
        return ''
    return (f'The {sum(r.interval is not None for r in result.rows)} ratios with an interval '
            f'are judged together (Benjamini-Hochberg at {1 - result.confidence:.3g}, so that '
            f'identical sides are marked different in at most '
            f'{(1 - result.confidence) * 100:.3g}% of comparisons): each interval is at the '
            f'per-row level that decided, {stats.percent(1 - result.row_level)}.')
