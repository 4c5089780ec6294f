"""The options of ``ssb-references compare`` and what it does with them (references.py
registers it; the comparison is compare/compare.py's, the files compare/output.py's and
compare/picture.py's)."""
import argparse
import os

from ssb_references.cli import options
from ssb_references.compare import compare, output
from ssb_references.judge import stats
from ssb_references.runs import sources


def add_arguments(p):
    g = p.add_argument_group('what to compare (one of the two forms)')
    g.add_argument('--system', action='append', default=[], metavar='NAME',
                   help='a system (or SYSTEM:PARTITION); twice or more: systems side by side, '
                        'the first is the baseline; once, with --before/--after: that system')
    g.add_argument('--before', metavar='SPEC',
                   help='the baseline side of one system: a date range START..END (ISO dates '
                        'or date-times, UTC; END excluded, either may be left out) or '
                        'comma-separated session UUIDs (with --db)')
    g.add_argument('--after', metavar='SPEC', help='the other side, as --before')
    g = p.add_argument_group('runs to read (default: the perflogs under ./perflogs)')
    g.add_argument('--perflog-dir', action='append', default=[], metavar='DIR',
                   help='perflogs as DIR/<system>/<partition>/<test>.log (repeatable)')
    g.add_argument('--perflog', action='append', default=[], metavar='FILE',
                   help='a perflog file (repeatable)')
    g.add_argument('--db', action='append', default=[], metavar='FILE',
                   help="ReFrame's results database (repeatable)")
    p.add_argument('--confidence', default=str(stats.COMPARE_CONFIDENCE), metavar='C',
                   help='of the intervals and the significance decisions '
                        f'(default {stats.COMPARE_CONFIDENCE:g})')
    p.add_argument('--out', default='ssb-compare', metavar='DIR',
                   help='output directory (default ssb-compare)')
    p.add_argument('--no-plots', action='store_true', help='tables only (no matplotlib needed)')


def confidence(text):
    """options.confidence, refused as this command's one error line."""
    try:
        return options.confidence(text)
    except argparse.ArgumentTypeError as err:
        raise compare.CompareError(f'--confidence {err}') from None


def _describe(runs):
    days = sorted(r.when for r in runs)
    parts = sorted({r.partition for r in runs})
    return (f'{len(runs)} test cases on {", ".join(parts)}, {days[0]:%Y-%m-%d %H:%M} to '
            f'{days[-1]:%Y-%m-%d %H:%M} UTC')


def run(args, out):
    """Compare, write the files; returns their paths."""
    level = confidence(args.confidence)
    if bool(args.before) != bool(args.after):
        raise compare.CompareError('--before and --after go together')
    if args.before and len(args.system) > 1:
        raise compare.CompareError('either --system A --system B ..., or --before and '
                                   '--after (with at most one --system)')
    if not args.before and len(args.system) < 2:
        raise compare.CompareError('name at least two systems (--system A --system B), or '
                                   'give --before and --after')
    dirs = args.perflog_dir or ([] if args.perflog or args.db else ['perflogs'])
    runs = sources.read_all(compare.TESTS, compare.signature, dirs, args.perflog, args.db)
    if not runs:
        raise compare.CompareError(f'no TrainingTest or SizeShapeGap runs in '
                                   f'{", ".join(dirs + args.perflog + args.db)}')
    if args.before:
        sides = compare.before_after_sides(runs, args.before, args.after,
                                           (args.system or [None])[0], bool(args.db))
        result = compare.compare(sides, level, 'before/after')
        specs = {'before': args.before, 'after': args.after}
    else:
        sides = compare.system_sides(runs, args.system)
        result = compare.compare(sides, level, 'systems')
        specs = {}
    for label, rs in sides.items():
        result.described[label] = (f'{specs[label]}: ' if label in specs else '') + _describe(rs)
    if not result.rows:
        raise compare.CompareError('nothing compared: ' + ('; '.join(result.left_out) or
                                                           'no common test'))
    os.makedirs(args.out, exist_ok=True)
    written = [output.write_csv(result, os.path.join(args.out, 'compare.csv'))]
    picture = None
    if not args.no_plots:
        from ssb_references.compare import picture
        picture = picture.plot(result, os.path.join(args.out, 'compare.png'))
        written.append(picture)
    written.append(output.write_markdown(result, os.path.join(args.out, 'compare.md'),
                                              picture))
    for line in result.left_out:
        print(f'left out: {line}', file=out)
    for line in result.notes:
        print(f'note: {line}', file=out)
    for line in output.largest_gap(result):
        print(line.replace('**', ''), file=out)
    for path in written:
        print(f'wrote {path}', file=out)
    return result
