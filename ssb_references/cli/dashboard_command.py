"""The options of ``ssb-references dashboard`` and what it does with them (references.py
registers it with the options of every command that reads runs; the page is
dashboard/build.py's)."""
from ssb_references.cli import options
from ssb_references.cli.options import UsageError
from ssb_references.dashboard import build
from ssb_references.reffile import reffile
from ssb_references.runs import sources


def add_arguments(p):
    p.add_argument('--out', default='ssb-dashboard', metavar='DIR',
                   help='write DIR/index.html, one self-contained page (default ssb-dashboard); '
                        'DIR must not be a symbolic link')
    p.add_argument('--last', type=options.count, default=5, metavar='N',
                   help='partitions side by side: median of the newest N runs (default 5)')


def run(args):
    _, runs = sources.load_runs(args, every_system=True)
    if not runs:
        raise UsageError('no runs selected: nothing to show')
    source = args.db or ', '.join(args.perflog or []) or args.perflog_dir
    path, all_series = build.write(runs, reffile.reference_dir(args.reference_dir), args.out,
                                   source=source, confidence=args.confidence,
                                   history=args.history, last_n=args.last)
    print(f'wrote {path}: {len(all_series)} test case(s), {len(runs)} runs')
    return 0
