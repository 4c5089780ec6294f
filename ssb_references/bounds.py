"""ReFrame's reading of a reference entry: the absolute band a value must stay in.

Same arithmetic as ``reframe.utility.sanity.reference_bounds``: for a non-zero
value the thresholds are fractions of |value|, for a value of 0 they are
absolute; ``None`` is unbounded.
"""
import math


def entry_tuple(entry):
    """(value, lower, upper, unit) of a YAML entry ([$xfail, msg, [...]] included)."""
    if entry and entry[0] == '$xfail':
        entry = entry[2]
    value, lower, upper = entry[:3]
    unit = entry[3] if len(entry) > 3 else None
    return value, lower, upper, unit


def band(value, lower, upper):
    def bound(t, default):
        if t is None:
            return default
        if value == 0:
            return t
        if value < 0:
            t = -t
        return value * (1 + t)

    return bound(lower, -math.inf), bound(upper, math.inf)


def within(x, value, lower, upper):
    lo, hi = band(value, lower, upper)
    return lo <= x <= hi
