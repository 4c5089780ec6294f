"""``ssb-references dashboard --out DIR``: every system's history as one page to open from a
shared directory (cli.py registers it with the options of every command that reads runs;
ssb-acceptance writes one into each report with ``write``)."""
from .. import drift, options, reffile, sources, stats
from ..options import UsageError
from . import page, series


def add_arguments(p):
    p.add_argument('--out', default='ssb-dashboard', metavar='DIR',
                   help='write DIR/index.html, one self-contained page (default ssb-dashboard); '
                        'DIR must not be a symbolic link')
    p.add_argument('--last', type=options.count, default=5, metavar='N',
                   help='partitions side by side: median of the newest N runs (default 5)')


def change_points(runs):
    """HOOK for the change-point command (issue 34, ``ssb-references changes``): its change
    points of ``runs`` as series.ChangePoint records. Until that command is part of this
    version: None (the page says that none were looked for)."""
    return None


def references_of(ref_dir):
    """refs_of(system, test) for series.build: the system's reference file, read once."""
    cache = {}

    def refs_of(system, test):
        if (system, test) not in cache:
            cache[(system, test)] = reffile.load(reffile.path_for(ref_dir, system), test)
        return cache[(system, test)]
    return refs_of


def write(runs, ref_dir, out, *, source, confidence=stats.DEFAULT_CONFIDENCE,
          history=drift.DEFAULT_HISTORY, last_n=5):
    """Build the page of ``runs`` and write ``out/index.html``; (its path, the series)."""
    points = change_points(runs)
    all_series = series.build(runs, references_of(ref_dir), confidence, history, points or ())
    html = page.render(all_series, runs, sources=source, confidence=confidence,
                       history=history, last_n=last_n, change_points=points)
    return page.write(html, out), all_series


def run(args):
    system, runs = sources.load_runs(args, every_system=True)
    if not runs:
        raise UsageError('no runs selected: nothing to show')
    source = args.db or ', '.join(args.perflog or []) or args.perflog_dir
    path, all_series = write(runs, reffile.reference_dir(args.reference_dir), args.out,
                             source=source, confidence=args.confidence, history=args.history,
                             last_n=args.last)
    print(f'wrote {path}: {len(all_series)} test case(s), {len(runs)} runs')
    return 0
