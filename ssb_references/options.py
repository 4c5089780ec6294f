"""Types of the command-line numbers and times: a nonsense value is a usage error naming
the option, never a silent "all" (``--last 0``), an unbounded band (``--spread-factor inf``)
or an empty selection that passes (``--since`` in the future)."""
import argparse
import math
import time

from .runs import parse_time


class UsageError(ValueError):
    """Options that cannot go together, or that select nothing."""


def count(text):
    """A whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not a whole number') from None
    if value < 1:
        raise argparse.ArgumentTypeError(f'{value} must be at least 1')
    return value


def _finite(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not a number') from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f'{text!r} must be a finite number')
    return value


def confidence(text):
    """A confidence level, strictly between 0 and 1."""
    value = _finite(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f'{text}: a confidence is between 0 and 1, e.g. 0.99')
    return value


def history(text):
    """How many earlier runs a verdict may read: at least the history it needs."""
    from .drift import MIN_HISTORY
    value = count(text)
    if value < MIN_HISTORY:
        raise argparse.ArgumentTypeError(f'{text}: at least {MIN_HISTORY} earlier runs')
    return value


def non_negative(text):
    value = _finite(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f'{text!r} must be at least 0')
    return value


def past_time(text):
    """Unix seconds of an ISO date/time (UTC) that is not in the future."""
    when = any_time(text)
    if when > time.time():
        raise argparse.ArgumentTypeError(f'{text!r} is in the future: no run is that new')
    return when


def any_time(text):
    """Unix seconds of an ISO date/time (UTC)."""
    try:
        return parse_time(text)
    except (ValueError, OverflowError) as err:
        raise argparse.ArgumentTypeError(str(err)) from None
