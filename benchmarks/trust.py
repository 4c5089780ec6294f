#!/usr/bin/env python3
"""Can a sysadmin trust the numbers? The README's first command and ssb-acceptance, repeated
(docs/benchmarks.md, "Trust": the targets and dated results).

- front-door: ``reframe -c reframe_tests -r`` as README.md writes it (ReFrame's defaults:
  asynchronous, no -C), back to back; the gap's time-per-megapixel ratio of each run with
  its interval, and their spread. With ``--unlocked N``, N more runs with the timing lock off
  (``-S timing_lock=false``) alternate with the locked ones: the noise the lock removes.
- acceptance: ``ssb-acceptance`` sessions on the builtin generic system: ``--history``
  unchanged sessions (the first 3 have no history to be judged against: exit 3, NOTHING
  JUDGED, listed as such), then ``--pinned`` sessions pinned to one core with ``taskset -c
  0`` (a real slowdown: the throughput must be flagged, exit 1), then ``--quiet`` more unchanged
  ones (each value judged against the history, the slow session in it: every flag is a false
  alarm, and each must exit 0). Then the rule's
  false-alarm rate on this stored history, leave-one-out: each value of each unchanged
  session judged against the same key's values in all the other unchanged sessions.

    python benchmarks/trust.py front-door --runs 3 --unlocked 3     # about 6 min on 2 cores
    python benchmarks/trust.py acceptance                            # about 17 min on 2 cores
    python benchmarks/trust.py acceptance -- -n 'TrainingTest.*single'   # a selection
"""
import argparse
import csv
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from ssb_references.acceptance.command import split_reframe_args
from ssb_references.judge import acceptance_judge, drift
from ssb_references.reffile import rule
from ssb_references.runs import resultsdb
from ssb_references.runs.run import TESTS, group, index_attrs

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.dirname(sys.executable)
GAP = 'hrvs_lrfs_time_per_mpx'
TARGET_LOW, TARGET_SPREAD = 1.5, 1.25      # issue: each ratio >= 1.5, max/min <= 1.25


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(('RFM_', 'SSB_'))}
    env.update(extra)
    return env


def perflog(workdir, test):
    paths = glob.glob(os.path.join(workdir, 'perflogs', 'generic', 'default', f'{test}.log'))
    rows = []
    for path in paths:
        with open(path) as f:
            rows += list(csv.DictReader(f, delimiter='|'))
    return rows


def front_door_run(locked, extra):
    """One README first-command run in a fresh directory: (wall seconds, gap record, CVs)."""
    workdir = tempfile.mkdtemp(prefix='ssb-front-door-')
    try:
        cmd = [os.path.join(BIN, 'reframe'), '-c', os.path.join(REPO, 'reframe_tests'), '-r',
               *([] if locked else ['-S', 'timing_lock=false']), *extra]
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=workdir, env=clean_env(), capture_output=True, text=True)
        wall = time.perf_counter() - start
        gaps = perflog(workdir, 'SizeShapeGap')
        runs = {r['variant']: r for r in perflog(workdir, 'TrainingTest')}
        if not gaps:
            raise SystemExit(f'no gap record (exit {proc.returncode}):\n{proc.stdout[-3000:]}')
        return {'locked': locked, 'wall_s': wall, 'exit': proc.returncode,
                'result': gaps[-1]['result'],
                'ratio': float(gaps[-1][f'{GAP}_value']),
                'low': float(gaps[-1].get(f'{GAP}_low_value') or 'nan'),
                'high': float(gaps[-1].get(f'{GAP}_high_value') or 'nan'),
                'cv': {v: float(r.get('pixel_throughput_cv_value') or 'nan')
                       for v, r in runs.items()}}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def front_door(args, extra):
    order = [True] * args.runs
    for i in range(args.unlocked):                 # alternate: locked, unlocked, ...
        order.insert(2 * i + 1, False)
    results = []
    for locked in order:
        results.append(front_door_run(locked, extra))
        r = results[-1]
        print(f'{"locked  " if locked else "unlocked"} {r["wall_s"]:6.1f} s  {GAP} '
              f'{r["ratio"]:.3f} [{r["low"]:.3f}, {r["high"]:.3f}]  {r["result"]}',
              file=sys.stderr, flush=True)
    lines = ['| run | timing lock | wall s | time per Mpx, HR&VS / LR&FS | 95% interval | '
             'LR&FS CV | HR&VS CV | gap test |', '|---|---|---|---|---|---|---|---|']
    for n, r in enumerate(results, 1):
        lines.append(f'| {n} | {"on" if r["locked"] else "off"} | {r["wall_s"]:.0f} | '
                     f'{r["ratio"]:.3f} | [{r["low"]:.3f}, {r["high"]:.3f}] | '
                     f'{r["cv"].get("lrfs", float("nan")):.3f} | '
                     f'{r["cv"].get("hrvs", float("nan")):.3f} | {r["result"]} |')
    for locked in (True, False):
        ratios = [r['ratio'] for r in results if r['locked'] == locked]
        if not ratios:
            continue
        walls = [r['wall_s'] for r in results if r['locked'] == locked]
        spread = max(ratios) / min(ratios)
        line = (f'- lock {"on" if locked else "off"}: {len(ratios)} runs, ratio median '
                f'{statistics.median(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}, '
                f'max/min {spread:.3f}; wall median {statistics.median(walls):.0f} s')
        if locked:
            ok = min(ratios) >= TARGET_LOW and spread <= TARGET_SPREAD
            line += (f' (target: each >= {TARGET_LOW}, max/min <= {TARGET_SPREAD}: '
                     f'{"met" if ok else "NOT met"})')
        lines.append(line)
    return '\n'.join(lines), results


def acceptance_session(out, db, pinned, extra, confidence):
    cmd = [os.path.join(BIN, 'ssb-acceptance'), '--out', out, '--confidence', str(confidence),
           '--', *extra]
    if pinned:
        cmd = ['taskset', '-c', '0'] + cmd
    latest = os.path.join(out, 'latest')
    before = os.readlink(latest) if os.path.islink(latest) else None
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True,
                          env=clean_env(RFM_SQLITE_DB_FILE=db,
                                        RFM_REFERENCE_PREFIX=os.path.dirname(db)))
    if not os.path.islink(latest) or os.readlink(latest) == before:
        # no report of this session: the one in latest/ is an earlier session's
        sys.exit(f'error: ssb-acceptance published no report (exit {proc.returncode}): '
                 f'{(proc.stderr or proc.stdout).strip()[-1500:]}')
    with open(os.path.join(latest, 'summary.json')) as f:
        summary = json.load(f)
    with open(os.path.join(latest, 'summary.txt')) as f:
        summary['text'] = f.read()
    return proc.returncode, summary


def leave_one_out(runs, confidence):
    """(flagged, judged): every judged value of every run against the values of the same
    test, key, workload and payload series in the other runs (the history drift reads)."""
    flagged = judged = 0
    for test in {r.test for r in runs}:
        of_test = [r for r in runs if r.test == test]
        for rs in group(of_test, index_attrs(of_test)).values():
            for run in rs:
                others = [r for r in rs if r is not run
                          and drift.left_out_because(run, r) is None]
                for name, (value, _) in run.perf.items():
                    pol = rule.policy(name)
                    past = [r.perf[name][0] for r in others if name in r.perf]
                    if pol is None or pol.spread_of or len(past) < drift.MIN_HISTORY:
                        continue
                    status, _ = drift.against_history(name, value, past, confidence)
                    judged += 1
                    flagged += status in drift.DRIFTED
    return flagged, judged


def acceptance(args, extra):
    base = tempfile.mkdtemp(prefix='ssb-acceptance-bench-')
    os.makedirs(os.path.join(base, 'references'))
    out, db = os.path.join(base, 'out'), os.path.join(base, 'results.db')
    plan = (['history'] * args.history + ['one core'] * args.pinned +
            ['unchanged'] * args.quiet)
    lines = ['| session | kind | exit | values judged against history | regressed | improved |'
             ' throughput verdicts | flagged |', '|---|---|---|---|---|---|---|---|']
    tally = {'unchanged': [0, 0], 'one core': [0, 0]}     # [flagged values, judged values]
    pinned_text, unchanged, nothing_judged, wrong_status = '', set(), [], []
    try:
        for n, kind in enumerate(plan, 1):
            status, summary = acceptance_session(out, db, kind == 'one core', extra,
                                                 args.confidence)
            if kind != 'one core':
                unchanged.add(summary['session'])
            judged = int(summary['notes'][0].split()[0]) if summary['notes'] else 0
            flagged = summary['regressed'] + summary['improved']
            if status == acceptance_judge.NOTHING_JUDGED:
                nothing_judged.append(n)
            if (status == acceptance_judge.NOTHING_JUDGED) != (judged == 0):   # exactly then
                wrong_status.append(f'session {n}: exit {status}, {judged} values judged')
            throughput = [f'{i["variable"]} {i["change_pct"]:+.0f}%' for i in summary['regressed']
                          if i['variable'] in ('throughput', 'pixel_throughput')]
            if kind == 'one core':
                pinned_text = summary['text']
            if kind in tally:
                tally[kind][0] += len(flagged)
                tally[kind][1] += judged
                if kind == 'one core':
                    tally[kind].append(bool(throughput))
            named = [f'{i["test"].split()[0]} {i["test"].split()[1].split("=")[-1]} '
                     f'{i["variable"]} {i["change_pct"]:+.0f}%' for i in flagged]
            lines.append(f'| {n} | {kind} | {status} | {judged} | {len(summary["regressed"])} | '
                         f'{len(summary["improved"])} | {", ".join(throughput) or "-"} | '
                         f'{"; ".join(named) or "-"} |')
            print(lines[-1], file=sys.stderr, flush=True)
        stored = [r for r in resultsdb.read(db, TESTS) if r.session in unchanged]
        loo_flagged, loo_judged = leave_one_out(stored, args.confidence)
    finally:
        if args.keep:
            print(f'kept the sessions, database and reports in {base}', file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)
    quiet_flags, quiet_judged = tally['unchanged'][:2]
    lines.append(f'- unchanged sessions: {quiet_flags} of {quiet_judged} judged values flagged '
                 f'(false alarms; expected at most about {1 - args.confidence:.0%})')
    lines.append(f'- leave-one-out over the {len(unchanged)} unchanged sessions: {loo_flagged} '
                 f'of {loo_judged} values flagged ({loo_flagged / max(loo_judged, 1):.1%}; '
                 f'confidence {args.confidence:g})')
    lines.append(f'- sessions that judged nothing (exit 3, NOTHING JUDGED: fewer than '
                 f'{drift.MIN_HISTORY} earlier sessions, no references): '
                 f'{", ".join(map(str, nothing_judged)) or "none"}' +
                 (f'; WRONG exit status: {"; ".join(wrong_status)}' if wrong_status else ''))
    caught = tally['one core'][2:]
    lines.append(f'- one-core sessions: throughput flagged as regressed in {sum(caught)} of '
                 f'{len(caught)}')
    lines += ['', 'The summary of the last one-core session:', '', '```', pinned_text.rstrip(),
              '```']
    return '\n'.join(lines)


def main(argv=None):
    argv, extra = split_reframe_args(argv)
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = p.add_subparsers(dest='section', required=True)
    fd = sub.add_parser('front-door', help='the README first command, repeated')
    fd.add_argument('--runs', type=int, default=3, help='runs with the timing lock (default 3)')
    fd.add_argument('--unlocked', type=int, default=0,
                    help='runs without it, alternated with the locked ones (default 0)')
    acc = sub.add_parser('acceptance', help='ssb-acceptance: history, one core, unchanged')
    acc.add_argument('--history', type=int, default=8, help='sessions first (default 8)')
    acc.add_argument('--quiet', type=int, default=2, help='unchanged sessions judged (default 2)')
    acc.add_argument('--pinned', type=int, default=1,
                     help='sessions pinned to one core, judged (default 1)')
    acc.add_argument('--confidence', type=float, default=0.99)
    acc.add_argument('--keep', action='store_true',
                     help='keep the sessions\' directory (database, reports) and say where')
    args = p.parse_args(argv)
    print(f'## {args.section}: {time.strftime("%Y-%m-%d")}, {os.cpu_count()} CPUs, '
          f'extra ReFrame options: {" ".join(extra) or "none"}\n')
    if args.section == 'front-door':
        print(front_door(args, extra)[0])
    else:
        print(acceptance(args, extra))


if __name__ == '__main__':
    main()
