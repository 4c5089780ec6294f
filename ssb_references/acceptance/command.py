"""``ssb-acceptance``: one scheduled acceptance run, judged, reported and kept (docs/acceptance.md).

It runs ReFrame's acceptance mode with results storage on, judges the session against the
references (ReFrame enforces them; improvements are found here) or, with ``--baseline``,
against a stored session, compares it with the previous session it judged through ReFrame's
``--performance-compare``, and writes a dated report directory with a one-screen summary.

Exit status: 0 nothing regressed; 1 performance drift; 2 tests failed to run (or this
command could not run them: another run holds the lock, ReFrame would not start, ...);
3 nothing judged (no history and no references yet: a new system's first nights).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from ssb_common import safefiles

from ssb_references import __version__
from ssb_references.acceptance import child, outdir, recent_changes, webhook
from ssb_references.cli import options
from ssb_references.cli.references import verdict_options
from ssb_references.dashboard import build as dashboard
from ssb_references.judge import acceptance_judge, drift, drift_family
from ssb_references.reffile import reffile
from ssb_references.report import charts, report
from ssb_references.runs import resultsdb, sources
from ssb_references.runs.run import TESTS, index_attrs

WEBHOOK_ENV = 'SSB_ACCEPTANCE_WEBHOOK_URL'
WEBHOOK_AUTH_ENV = 'SSB_ACCEPTANCE_WEBHOOK_AUTH'


class Failure(Exception):
    """This command could not do its job; exit status 2 with the message."""


def parser():
    p = argparse.ArgumentParser(
        prog='ssb-acceptance', description=__doc__.split('\n\n')[0],
        epilog='Arguments after -- go to ReFrame as they are (e.g. -- -S models=smallcnn).')
    p.add_argument('--version', action='version', version=f'%(prog)s {__version__}')
    p.add_argument('-C', '--config', metavar='FILE',
                   help='ReFrame site configuration (default: ReFrame\'s builtin generic system)')
    p.add_argument('--checks', default='reframe_tests', metavar='DIR',
                   help='the suite\'s ReFrame tests (default: reframe_tests in the current '
                        'directory, the repository root)')
    p.add_argument('--system', metavar='SYSTEM[:PARTITION]',
                   help='ReFrame --system: the system, or one partition of it')
    p.add_argument('--out', default='ssb-acceptance', metavar='DIR',
                   help='reports go to DIR/reports/<UTC time>/, DIR/latest points at the newest; '
                        'ReFrame works in DIR/reframe (default ./ssb-acceptance)')
    p.add_argument('--mode', type=_mode_name,
                   help='ReFrame --mode (default: acceptance with -C; none on the '
                        'builtin generic system, which has no modes)')
    p.add_argument('--baseline', metavar='SESSION',
                   help='judge against this stored session (UUID, e.g. the last before an '
                        'upgrade) instead of the references, which are then not enforced')
    p.add_argument('--db', metavar='FILE',
                   help='results database (default: the one the configuration names)')
    p.add_argument('--webhook', metavar='URL', type=_webhook_url,
                   default=os.environ.get(WEBHOOK_ENV) or None,
                   help=f'POST the summary as JSON here (default ${WEBHOOK_ENV}; none: off); '
                        f'${WEBHOOK_AUTH_ENV} is sent as the Authorization header')
    verdict_options(p)
    p.add_argument('--change-nights', type=options.count, default=recent_changes.RECENT_NIGHTS,
                   metavar='N',
                   help='list the change points of the stored history found in the last N '
                        f'days (default {recent_changes.RECENT_NIGHTS}; ssb-references changes)')
    p.add_argument('--dry-run', action='store_true',
                   help='ReFrame --dry-run: make the job scripts, submit nothing, write no report')
    return p


def _webhook_url(text):
    try:
        return webhook.check_url(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _mode_name(text):
    # ReFrame reads '/' in a mode name as a configuration path, and fails with a traceback.
    if not re.fullmatch(r'[\w.-]+', text):
        raise argparse.ArgumentTypeError(f'{text!r} is not a mode name')
    return text


def without_traceback(text):
    """ReFrame's output with a Python traceback cut down to its last line, the error."""
    head, sep, trace = text.partition('Traceback (most recent call last):')
    if not sep:
        return text
    last = [line for line in trace.splitlines() if line.strip()][-1:]
    return head + ''.join(last)


def reframe_base(args):
    """``reframe`` with the tests, the configuration and the system, no action yet."""
    cmd = [resultsdb.REFRAME, '-c', args.checks]
    if args.config:
        cmd += ['-C', os.path.abspath(args.config)]
    if args.system:
        cmd += ['--system', args.system]
    return cmd


def reframe_option(args, env, name):
    """A configuration option as ReFrame resolves it (environment variables included)."""
    proc = subprocess.run(reframe_base(args) + [f'--show-config={name}'],
                          capture_output=True, text=True, env=env)
    lines = proc.stdout.strip().splitlines()
    if 'no such configuration parameter' in proc.stdout + proc.stderr:
        return None                                        # not set: ReFrame's default
    if proc.returncode != 0 or not lines:
        raise Failure(f'ReFrame could not read the configuration: '
                      f'{(proc.stderr or proc.stdout).strip()[-2000:]}')
    value = json.loads(lines[-1])
    return os.path.expandvars(value) if isinstance(value, str) else value


def results_db(args, env):
    """The results database ReFrame stores sessions in, as the configuration names it."""
    if args.db:
        return os.path.abspath(args.db)
    return reframe_option(args, env, 'storage/0/sqlite_db_file')


def performance_compare(args, env, base, new, workdir):
    """ReFrame's --performance-compare of the new session (left) with ``base`` (right),
    as CSV text ('' if it failed)."""
    proc = subprocess.run(reframe_base(args) + acceptance_judge.compare_args(new, base),
                          capture_output=True, text=True, env=env, cwd=workdir)
    return proc.stdout if proc.returncode == 0 else ''


def run(args, extra):
    args.checks = os.path.abspath(args.checks)
    if not os.path.isfile(os.path.join(args.checks, 'training.py')):
        raise Failure(f'no size-shape-bench tests in {args.checks}: run from the repository '
                      f'root or pass --checks DIR')
    for given in (args.config, args.db):            # ReFrame would wait on a FIFO forever
        if given:
            safefiles.require_regular(given)
    out = outdir.own_dir(os.path.abspath(args.out), follow=True)
    outdir.own_dir(os.path.join(out, 'reports'))
    with outdir.Lock(out):
        # A run killed mid-way left only an incomplete directory: never a report.
        for name in os.listdir(os.path.join(out, 'reports')):
            if name.startswith('.incomplete-'):
                shutil.rmtree(os.path.join(out, 'reports', name), ignore_errors=True)
        stamp = outdir.now().strftime('%Y%m%dT%H%M%SZ')
        # A new directory of its own: nothing planted in it to write through.
        partial = tempfile.mkdtemp(prefix=f'.incomplete-{stamp}-',
                                   dir=os.path.join(out, 'reports'))
        workdir = outdir.own_dir(os.path.join(out, 'reframe'))
        env = dict(os.environ, RFM_ENABLE_RESULTS_STORAGE='1')
        if args.db:
            env['RFM_SQLITE_DB_FILE'] = os.path.abspath(args.db)
        # The references the tests read: under ReFrame's reference prefix.
        refs_dir = reffile.reference_dir(prefix=reframe_option(
            args, env, 'general/0/reference_prefix') or args.checks)
        empty_refs = None
        if args.baseline:            # judged against the session, not the references
            empty_refs = tempfile.mkdtemp(prefix='ssb-no-references-')
            env[reffile.PREFIX_ENV] = empty_refs
        report_file = os.path.join(partial, 'reframe-report.json')
        try:
            with open(os.path.join(partial, 'reframe.log'), 'w') as log:
                mode = args.mode or ('acceptance' if args.config else None)
                cmd = reframe_base(args) + (['--mode', mode] if mode else []) + [
                    '--dry-run' if args.dry_run else '-r', '--report-file', report_file, *extra]
                status = child.run(cmd, cwd=workdir, env=env, stdout=log,
                                   stderr=subprocess.STDOUT)    # dies with this command
        finally:
            if empty_refs:
                shutil.rmtree(empty_refs, ignore_errors=True)
        if not os.path.exists(report_file):
            with open(os.path.join(partial, 'reframe.log')) as f:
                tail = f.read()[-3000:]
            shutil.rmtree(partial, ignore_errors=True)
            raise Failure(f'ReFrame ran no test (exit status {status}):\n'
                          f'{without_traceback(tail)}')
        with open(report_file) as f:
            session = json.load(f)
        if args.dry_run:
            shutil.rmtree(partial, ignore_errors=True)
            return acceptance_judge.dry_run_summary(session, status)
        db = results_db(args, env)
        uuid = session['session_info'].get('uuid')
        previous, never_judged = (None, []) if args.baseline else \
            acceptance_judge.previous_session(db, uuid, outdir.judged_sessions(out))
        base = args.baseline or previous
        compare = performance_compare(args, env, base, uuid, workdir) if base and uuid else ''
        with open(os.path.join(partial, 'compare.csv'), 'w') as f:
            f.write(compare)
        system = acceptance_judge.system_of(session)
        refs_path = reffile.path_for(refs_dir, system or 'unknown')
        stored = stored_runs(db, system)
        verdicts = [] if args.baseline else session_verdicts(stored, uuid, refs_path, args)
        summary = acceptance_judge.judge(
            session, compare, args.baseline, previous, None if args.baseline else refs_path,
            verdicts, args.confidence, acceptance_judge.never_judged_notes(
                never_judged, os.path.join(out, 'reports')))
        summary['report_dir'] = os.path.join(out, 'reports', stamp)
        write_report(stored, summary, partial, refs_dir, args.change_nights)
        write_dashboard(stored, db, summary, partial, refs_dir, args)
        with open(os.path.join(partial, 'summary.json'), 'w') as f:
            json.dump(summary, f, indent=1, sort_keys=True)
        with open(os.path.join(partial, 'summary.txt'), 'w') as f:
            f.write(acceptance_judge.render(summary))
        outdir.publish(out, partial, stamp)
        return summary


def stored_runs(db, system):
    """The system's stored runs, read once and checked (runs/sources.py): the verdicts, the
    report, the change points and the dashboard all count the same runs."""
    if not system:
        return []
    try:
        return sources.usable([r for r in resultsdb.read(db, TESTS) if r.system == system])
    except resultsdb.ResultsDBError as err:
        raise Failure(str(err)) from None


def session_verdicts(stored, uuid, refs_path, args):
    """drift's verdicts on every run of the session ``uuid``, against the ``stored`` sessions
    of the same system (history) or the references."""
    verdicts = []
    for test in TESTS:
        runs = [r for r in stored if r.test == test]
        refs = reffile.load(refs_path, test)
        for new in (r for r in runs if r.session == uuid):
            verdicts += drift.judge_run(new, runs, index_attrs(runs), refs, args.confidence,
                                        args.history)
    return drift_family.judge(verdicts, args.confidence)


def write_report(runs, summary, out_dir, refs_dir, nights=recent_changes.RECENT_NIGHTS):
    """ssb-references report and changes of the system's stored ``runs``, in the report
    directory; the change points of the last ``nights`` days in the summary."""
    system = summary['system']
    try:
        if runs:
            refs = reffile.load(reffile.path_for(refs_dir, system))
            report.write_report(runs, refs, os.path.join(out_dir, 'report'), system)
            summary['change_nights'] = nights
            summary['recent_changes'] = recent_changes.recent_lines(
                runs, os.path.join(out_dir, 'changes'), nights)
    except (charts.PlotError, reffile.RefFileError) as err:
        summary['notes'].append(f'report not drawn: {err}')


def write_dashboard(runs, db, summary, out_dir, refs_dir, args):
    """The dashboard of the system's stored ``runs``, in the report directory
    (DIR/latest/dashboard/index.html is then the newest page)."""
    try:
        if runs:
            dashboard.write(runs, refs_dir, os.path.join(out_dir, 'dashboard'), source=db,
                            confidence=args.confidence, history=args.history)
    except (reffile.RefFileError, OSError) as err:
        summary['notes'].append(f'dashboard not written: {err}')


def split_reframe_args(argv=None):
    """(this command's arguments, ReFrame's: those after ``--``)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if '--' not in argv:
        return argv, []
    at = argv.index('--')
    return argv[:at], argv[at + 1:]


def main(argv=None):
    argv, extra = split_reframe_args(argv)
    args = parser().parse_args(argv)
    try:
        summary = run(args, extra)
    except (Failure, outdir.OutDirError, OSError, ValueError, resultsdb.ResultsDBError,
            child.Stopped) as err:
        # ValueError: a report file or database ReFrame left unreadable.
        print(f'ssb-acceptance: error: {err}', file=sys.stderr)
        return acceptance_judge.NOT_RUN
    except KeyboardInterrupt:       # SIGINT outside ReFrame's run (child.py has that one)
        print('ssb-acceptance: error: stopped by SIGINT: no report published',
              file=sys.stderr)
        return acceptance_judge.NOT_RUN
    print(acceptance_judge.render(summary), end='')
    if args.webhook and not args.dry_run:
        why = webhook.post(args.webhook, summary, os.environ.get(WEBHOOK_AUTH_ENV))
        if why:
            print(f'ssb-acceptance: warning: could not POST the summary to the webhook: {why}',
                  file=sys.stderr)
    return summary['exit_status']
