"""``ssb-references`` / ``python -m ssb_references``: propose, diff, update, drift, report,
compare.

Exit status: 0 done; 1 ``drift`` found drift; 2 refused or failed (the message says why).
"""
import argparse
import collections
import sys

from ssb_contract import perf

from ssb_references import __version__
from ssb_references.cli import compare_command, options
from ssb_references.cli.options import UsageError
from ssb_references.compare import compare
from ssb_references.judge import drift, stats
from ssb_references.reffile import diff, propose, reffile, refwrite, rule
from ssb_references.report import charts, report
from ssb_references.runs import perflog, resultsdb, sources
from ssb_references.runs.run import TESTS, TEST_NAME, index_attrs, key_text, meta_key
from ssb_references.runs.text import table


def _proposal_options(p):
    g = p.add_argument_group('proposal')
    g.add_argument('--last', type=options.count, default=5, metavar='N',
                   help='use the newest N runs of each partition x variant x model (default 5)')
    g.add_argument('--min-runs', type=options.count, default=3, metavar='N',
                   help='refuse keys with fewer runs (default 3)')
    g.add_argument('--spread-factor', type=options.non_negative, default=rule.SPREAD_FACTOR,
                   metavar='K',
                   help='tolerance >= K x the largest relative distance from the median '
                        f'(default {rule.SPREAD_FACTOR:g})')
    g.add_argument('--min-tolerance', type=options.non_negative, default=0.0, metavar='FRACTION',
                   help='raise the floor of every tolerance but those of counts to FRACTION '
                   '(shared or noisy machines; default 0: the floors of docs/references.md)')
    g.add_argument('--allow-mixed-versions', action='store_true',
                   help="accept a key's runs with different TensorFlow versions")
    g.add_argument('--skip-incomplete', action='store_true',
                   help='leave out keys with too few runs instead of refusing')
    g.add_argument('--replace', action='store_true',
                   help='drop entries of the old file that are not proposed again')


def verdict_options(p):
    """How a new value is judged against the history of its workload (judge/drift.py): for
    ``drift`` and ``ssb-acceptance``."""
    p.add_argument('--confidence', type=options.confidence, default=stats.DEFAULT_CONFIDENCE,
                   metavar='C',
                   help='of the prediction interval a value must leave to be flagged '
                        f'(default {stats.DEFAULT_CONFIDENCE:g}: about 1 false alarm in '
                        f'{round(1 / (1 - stats.DEFAULT_CONFIDENCE))} unchanged values)')
    p.add_argument('--history', type=options.history, default=drift.DEFAULT_HISTORY, metavar='N',
                   help='judge against at most the N newest earlier runs of the same workload '
                        f'and payload series (default {drift.DEFAULT_HISTORY}; with fewer than '
                        f'{drift.MIN_HISTORY}, the references)')


def parser():
    p = argparse.ArgumentParser(
        prog='ssb-references',
        description='Per-system performance references of size-shape-bench (docs/references.md).')
    p.add_argument('--version', action='version', version=f'%(prog)s {__version__}')
    sub = p.add_subparsers(dest='command', required=True, metavar='COMMAND')
    cmds = {
        'propose': 'print the reference file that update would write',
        'diff': 'show the old references next to the proposed ones',
        'update': 'write the proposed references (previous file kept in history/)',
        'drift': 'judge the newest run of each key against its history (or its references)',
        'report': 'write LR&FS vs HR&VS tables and PNG plots with trends',
    }
    subs = {}
    for name, help_text in cmds.items():
        subs[name] = sp = sub.add_parser(name, help=help_text, description=help_text)
        options.add_run_options(sp)
    for name in ('propose', 'diff', 'update'):
        _proposal_options(subs[name])
    for name in ('propose', 'diff', 'update', 'report'):
        subs[name].add_argument(
            '--tta-aggregate', choices=rule.TTA_AGGREGATES, default='mlperf',
            help='how the runs of a time-to-accuracy variable are combined: mlperf (drop the '
                 'fastest and the slowest, mean of the rest: MLPerf Training; default) or median')
    verdict_options(subs['drift'])
    subs['drift'].add_argument('--all', action='store_true',
                               help='show every variable, not only the drifted ones')
    subs['report'].add_argument('--out', default='ssb-report', metavar='DIR',
                                help='output directory (default ssb-report)')
    subs['report'].add_argument('--last', type=options.count, default=5, metavar='N',
                                help='side by side: median of the newest N runs (default 5)')
    subs['report'].add_argument('--no-plots', action='store_true',
                                help='tables only (no matplotlib needed)')
    help_text = 'systems side by side, or one system before and after: ratios with intervals'
    compare_command.add_arguments(sub.add_parser('compare', help=help_text, description=help_text))
    return p


def _rule(args):
    rule = {'centre': f'median of the newest {args.last} runs (at least {args.min_runs}); time '
                      f'to accuracy: {args.tta_aggregate}',
            'tolerance': f'max(floor, {args.spread_factor:g} x max|run - median|/median) on the '
                         f'worse side; rates: from the steady epoch time; counts: both sides',
            'floors (relative, absolute)': {n: [p.rel_floor, p.abs_floor]
                                            for n, p in perf.BY_NAME.items()}}
    if args.min_tolerance:
        rule['min_tolerance'] = args.min_tolerance
    return rule


def _propose(args, system, runs):
    """Proposals for every test that ran, merged with the file's entries into one file.

    Returns ({test: {key: KeyProposal}}, skipped, {test: old RefFile or None}, path, data).
    """
    ref_dir = reffile.reference_dir(args.reference_dir)
    path = reffile.path_for(ref_dir, system)
    proposals, skipped, olds, data = {}, [], {}, None
    for test in TESTS:
        mine = [r for r in runs if r.test == test]
        olds[test] = reffile.load(path, test)
        if mine:
            proposals[test], test_skipped = propose.propose(
                mine, system, min_runs=args.min_runs, last_n=args.last,
                spread_factor=args.spread_factor, allow_mixed_versions=args.allow_mixed_versions,
                skip_incomplete=args.skip_incomplete, min_tolerance=args.min_tolerance,
                tta_aggregate=args.tta_aggregate)
            skipped += test_skipped
        index = index_attrs([r for r in mine if r.system == system] or
                            [r for r in runs if r.test == test])
        if olds[test] is not None and not mine:
            index = olds[test].index[1:]
        data = refwrite.build(system, proposals.get(test, {}), index, olds[test], args.replace,
                             _rule(args), test=test, data=data)
    return proposals, skipped, olds, path, data


def _diff(olds, proposals, replace):
    shown = [test for test in TESTS
             if proposals.get(test) or (olds[test] is not None and olds[test].entries)]
    return '\n'.join(diff.render(olds[test], proposals.get(test, {}), replace)
                     for test in shown or [TEST_NAME])


def _notes(proposals, skipped, out):
    for line in skipped:
        print(f'skipped {line}', file=out)
    for test, test_proposals in proposals.items():
        for kp in test_proposals.values():
            for note in kp.notes:
                print(f'note: {meta_key(test, kp.key)}: {note}', file=out)


def cmd_propose(args):
    system, runs = sources.load_runs(args)
    proposals, skipped, old, path, data = _propose(args, system, runs)
    _notes(proposals, skipped, sys.stderr)
    sys.stdout.write(refwrite.dump(data))
    return 0


def cmd_diff(args):
    system, runs = sources.load_runs(args)
    proposals, skipped, old, path, data = _propose(args, system, runs)
    exists = any(o is not None for o in old.values())
    print(f'{path}: {"current" if exists else "no file yet"} vs proposed '
          f'(band: the values that pass)')
    print(_diff(old, proposals, args.replace))
    _notes(proposals, skipped, sys.stdout)
    return 0


def cmd_update(args):
    system, runs = sources.load_runs(args)
    proposals, skipped, old, path, data = _propose(args, system, runs)
    print(_diff(old, proposals, args.replace))
    _notes(proposals, skipped, sys.stdout)
    saved = refwrite.write(path, refwrite.dump(data))
    if saved:
        print(f'previous references kept as {saved}')
    print(f'wrote {path}')
    return 0


def cmd_drift(args):
    system, runs = sources.load_runs(args)
    runs = [r for r in runs if r.system == system]
    path = reffile.path_for(reffile.reference_dir(args.reference_dir), system)
    verdicts = []
    for test in TESTS:
        mine = [r for r in runs if r.test == test]
        if mine:
            verdicts += drift.drift(reffile.load(path, test), mine, index_attrs(mine),
                                    args.confidence, args.history)
    if not verdicts:
        raise UsageError(f'no runs of {system!r} and no references ({path}): nothing to judge')
    drifted = [v for v in verdicts if v.status in drift.DRIFTED]
    if drifted or args.all:
        print(drift.render(verdicts, args.all))
    judged = collections.Counter(v.basis for v in verdicts if v.value is not None)
    unjudged = sorted({key_text(v.key) for v in verdicts if v.status == 'no reference'})
    if unjudged:
        print(f'neither {drift.MIN_HISTORY} earlier runs nor a reference for: '
              f'{", ".join(unjudged)}')
    print(f'{path}: {len(drifted)} of {sum(judged.values())} value(s) drifted; '
          f'{judged["history"]} judged against their history at {stats.percent(args.confidence)} '
          f'confidence, {judged["references"]} against the references (too little history)')
    return 1 if drifted else 0


def cmd_report(args):
    system, runs = sources.load_runs(args)
    runs = [r for r in runs if r.system == system]
    if not runs:
        raise UsageError(f'no runs of {system!r} selected')
    path = reffile.path_for(reffile.reference_dir(args.reference_dir), system)
    refs = reffile.load(path)
    written, rows = report.write_report(runs, refs, args.out, system, args.last,
                                        plots=not args.no_plots,
                                        tta_aggregate=args.tta_aggregate)
    print(table(report.HEADERS, report.summary_table(rows)))
    tta = [r for r in runs if r.test == report.TTA_TEST]
    if tta:
        print(table(report.TTA_HEADERS, report.tta_table(tta, args.last, args.tta_aggregate)))
    for w in written:
        print(f'wrote {w}')
    return 0


def cmd_compare(args):
    compare_command.run(args, sys.stdout)
    return 0


COMMANDS = {'propose': cmd_propose, 'diff': cmd_diff, 'update': cmd_update,
            'drift': cmd_drift, 'report': cmd_report, 'compare': cmd_compare}

ERRORS = (UsageError, ValueError, propose.Refusal, reffile.RefFileError, perflog.PerflogError,
          resultsdb.ResultsDBError, charts.PlotError, compare.CompareError, OSError)


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except ERRORS as err:
        print(f'ssb-references {args.command}: error: {err}', file=sys.stderr)
        return 2
