"""The options of ``ssb-references changes`` and what it does with them (references.py
registers it and adds the options naming the runs; the change points are
judge/changes.py's, the files report/change_files.py's)."""
from ssb_references.cli import options
from ssb_references.judge import changepoints, changes
from ssb_references.report import change_files
from ssb_references.runs import sources


def add_arguments(p):
    """The change-point method's settings (judge/changepoints.py, docs/references.md)."""
    p.add_argument('--out', default='ssb-changes', metavar='DIR',
                   help='writes DIR/changes.csv and DIR/changes.md (default ssb-changes)')
    p.add_argument('--pvalue', type=options.confidence, default=changepoints.MAX_PVALUE,
                   metavar='P', help='a change must be this unlikely by chance '
                                     f'(default {changepoints.MAX_PVALUE:g})')
    p.add_argument('--min-change', type=options.non_negative,
                   default=changepoints.MIN_MAGNITUDE, metavar='FRACTION',
                   help=f'and at least this large (default {changepoints.MIN_MAGNITUDE:g}: 5%%)')
    p.add_argument('--window', type=options.count, default=changepoints.WINDOW, metavar='N',
                   help=f'runs per sliding window (default {changepoints.WINDOW})')


def run(args, out):
    """Find, print and write the change points of the runs ``args`` name."""
    read = []
    system, runs = sources.load_runs(args, read)
    found = changes.find([r for r in runs if r.system == system], args.window, args.pvalue,
                         args.min_change)
    found = found._replace(notes=changes.out_of_order(read) + found.notes)
    for change in found.changes:
        print(changes.line(change), file=out)
    for text in found.notes:
        print(f'note: {text}', file=out)
    written = change_files.write(args.out, found, changes.params_text(
        args.window, args.pvalue, args.min_change))
    print(f'{len(found.changes)} change point(s) in {found.judged} series of {system}', file=out)
    for path in written:
        print(f'wrote {path}', file=out)
