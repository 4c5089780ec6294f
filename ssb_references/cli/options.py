"""Options the commands share: the types of their numbers and times, and the options that
name the runs to read. A nonsense value is a usage error naming the option, never a silent
"all" (``--last 0``), an unbounded band (``--spread-factor inf``) or an empty selection that
passes (``--since`` in the future)."""
import argparse
import math
import time

from ssb_references.reffile import reffile
from ssb_references.runs.run import TEST_NAME, parse_time


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
    from ssb_references.judge.drift import MIN_HISTORY
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


def add_run_options(p):
    """The options that name the runs to read (runs/sources.py reads them), and the reference
    directory."""
    g = p.add_argument_group('runs to read (default: the perflogs under ./perflogs)')
    g.add_argument('--system', help='the system (default: the only one found)')
    g.add_argument('--perflog-dir', default='perflogs', metavar='DIR',
                   help=f'ReFrame perflog directory: DIR/<system>/<partition>/{TEST_NAME}.log')
    g.add_argument('--perflog', action='append', metavar='FILE',
                   help='a perflog file (repeatable) instead of --perflog-dir')
    g.add_argument('--db', metavar='FILE',
                   help="ReFrame's results database (storage/sqlite_db_file) instead of perflogs")
    g.add_argument('--session', action='append', metavar='UUID',
                   help='with --db: only these stored sessions (repeatable)')
    g.add_argument('--environ', help='only runs in this programming environment')
    g.add_argument('--since', type=past_time,
                   help='only runs completed at or after this ISO date/time (UTC)')
    g.add_argument('--until', type=any_time,
                   help='only runs completed at or before this ISO date/time (UTC)')
    g.add_argument('--where', action='append', metavar='NAME=VALUE', default=[],
                   help='only runs whose logged test variable NAME is VALUE (repeatable), '
                   'e.g. epochs=3')
    g.add_argument('--ignore-other-systems', action='store_true',
                   help='drop runs of other systems instead of refusing')
    p.add_argument('--reference-dir', metavar='DIR',
                   help=f'where <system>.yaml lives (default: <ReFrame reference prefix>/'
                        f'{reffile.SUBDIR}: ${reffile.PREFIX_ENV}, else {reffile.TESTS_DIR}/ '
                        f'of the checkout this runs in)')
