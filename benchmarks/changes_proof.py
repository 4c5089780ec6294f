#!/usr/bin/env python3
"""Does ``ssb-references changes`` find what is there, and nothing else? And does
``compare`` leave identical partitions alone? (docs/benchmarks.md, "Change points").

Seeded nightly histories are made from real perflog records (one real run of each test
case, from a short ReFrame run on the builtin generic system unless ``--perflog`` names a
perflog), each night's record a copy with its own completion time and job ID, and every
measured value times (1 + ``--noise`` x a standard normal draw); counts (shapes, graphs)
stay exact. Then:

- identical: no change; change points in at most 1% of the series, and ``compare`` of the
  partitions, each against the first, marks no row different;
- step: the steady epoch time x 1/0.9 from night 200 (throughput -10%): found within +-2
  nights, size 7 to 13%;
- small step: 3%, under the 5% floor: not reported by default;
- creep: 1% slower a week, compounded: after how many weeks it is found.

    python benchmarks/changes_proof.py                   # a ReFrame run first (about 1 min)
    python benchmarks/changes_proof.py --perflog perflogs/generic/default/TrainingTest.log
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)          # run as a script from a checkout
from ssb_contract import perf  # noqa: E402
from ssb_references.cli import references as cli  # noqa: E402
from ssb_references.judge import changes  # noqa: E402
from ssb_references.runs import perflog  # noqa: E402

T0 = 1_673_769_600.0                # 2023-01-15T08:00Z: the first night, 1000 nights ago
DAY = 86400.0
RATES = {v.name for v in perf.PERF_VARS if v.follows == 'steady_epoch_time'}
SELECTION = ['-n', 'TrainingTest.*lrfs.*single', '-S', 'epochs=3']


def real_perflog(workdir):
    """A short real ReFrame run on the generic system; its TrainingTest perflog."""
    cmd = [os.path.join(os.path.dirname(sys.executable), 'reframe'), '-c',
           os.path.join(REPO, 'reframe_tests'), '-r', *SELECTION]
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    path = os.path.join(workdir, 'perflogs', 'generic', 'default', 'TrainingTest.log')
    if proc.returncode or not os.path.exists(path):
        sys.exit(f'error: the ReFrame run failed (exit {proc.returncode}): '
                 f'{(proc.stdout + proc.stderr)[-2000:]}')
    return path


def templates(path):
    """The real records of one perflog file, one per test case."""
    found = {}
    for _, rec in perflog.records(path):
        found.setdefault((rec.get('variant'), rec.get('model'), rec.get('scale')), rec)
    return list(found.values())


def slowdown_at(kind, night):
    """The factor on the steady epoch time of one night."""
    if kind == 'step':
        return 1 / 0.9 if night >= 200 else 1.0
    if kind == 'small step':
        return 1.03 if night >= 200 else 1.0
    if kind == 'creep':
        return 1.01 ** (night / 7)
    return 1.0


def night_record(template, night, partition, kind, noise, rng):
    rec = dict(template)
    when = T0 + night * DAY
    rec['job_completion_time_unix'] = repr(when)
    rec['job_completion_time'] = np.datetime_as_string(np.datetime64(int(when), 's'))
    rec['jobid'] = str(100000 + night)
    rec['partition'] = partition
    factor = slowdown_at(kind, night)
    for key in [k for k in rec if k.endswith('_value')]:
        name = key[:-len('_value')]
        pol = perf.BY_NAME.get(name)
        value = perflog._float(rec[key])
        if pol is None or value is None or pol.better == 'exact' or pol.spread_of:
            continue
        value *= 1 + noise * rng.standard_normal()
        if name == 'steady_epoch_time':
            value *= factor
        elif name in RATES:
            value /= factor
        rec[key] = repr(float(value))
    return rec


def write_history(root, recs, nights, partitions, kind, noise, seed):
    """perflogs/generic/<partition>/TrainingTest.log for every partition; their directory."""
    rng = np.random.default_rng(seed)
    out = os.path.join(root, 'perflogs')
    for p in range(partitions):
        part = f'p{p}'
        path = os.path.join(out, 'generic', part, 'TrainingTest.log')
        os.makedirs(os.path.dirname(path), exist_ok=True)
        header = list(recs[0])
        with open(path, 'w') as f:
            f.write('|'.join(header) + '\n')
            for night in range(nights):
                for t in recs:
                    rec = night_record(t, night, part, kind, noise, rng)
                    f.write('|'.join(rec.get(k, '') for k in header) + '\n')
    return out


def run_changes(perflog_dir, out):
    with open(os.devnull, 'w') as sink:
        stdout, sys.stdout = sys.stdout, sink
        try:
            status = cli.main(['changes', '--perflog-dir', perflog_dir, '--out', out])
        finally:
            sys.stdout = stdout
    if status:
        sys.exit(f'error: ssb-references changes exited {status}')
    with open(os.path.join(out, 'changes.csv')) as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(out, 'changes.md')) as f:
        judged = int(f.read().split(' change point(s) in ')[1].split()[0])
    return rows, judged


def run_compare(perflog_dir, partitions, out):
    sides = [x for p in range(partitions) for x in ('--system', f'generic:p{p}')]
    with open(os.devnull, 'w') as sink:
        stdout, sys.stdout = sys.stdout, sink
        try:
            status = cli.main(['compare', '--perflog-dir', perflog_dir, *sides, '--out', out])
        finally:
            sys.stdout = stdout
    if status:
        sys.exit(f'error: ssb-references compare exited {status}')
    with open(os.path.join(out, 'compare.csv')) as f:
        rows = [r for r in csv.DictReader(f) if r['significant'] in ('yes', 'no')]
    return sum(r['significant'] == 'yes' for r in rows), len(rows)


def night_of(row):
    return round((float(np.datetime64(row['date'].rstrip('Z')).astype('datetime64[s]')
                        .astype(float)) - T0) / DAY)


def creep_weeks(recs, noise, seed, max_weeks=52):
    """The first week after which the creep's steady epoch time has a change point."""
    with tempfile.TemporaryDirectory() as tmp:
        runs = perflog.read([os.path.join(write_history(tmp, recs, 7 * max_weeks, 1, 'creep',
                                                        noise, seed),
                                          'generic', 'p0', 'TrainingTest.log')])
    for week in range(2, max_weeks + 1):
        upto = [r for r in runs if r.time < T0 + 7 * week * DAY]
        found, _, _ = changes.find(upto)
        if any(c.variable == 'steady_epoch_time' for c in found):
            return week
    return None


def step_found(rows, night, low, high):
    """(throughput series whose change is within +-2 nights of ``night`` with a size from
    ``low`` to ``high`` %, other change points)."""
    hits = {(r['system_partition'], r['key']) for r in rows if r['variable'] == 'throughput'
            and abs(night_of(r) - night) <= 2 and low <= -float(r['change_pct']) <= high}
    other = [r for r in rows if r['variable'] not in RATES | {'steady_epoch_time'}
             or abs(night_of(r) - night) > 2]
    return len(hits), len(other)


def prove(recs, nights=365, partitions=4, noise=0.03, seed=0, step_night=200):
    """The proof's numbers for one seed: {check: value}."""
    out = {}
    for kind in ('identical', 'step', 'small step'):
        with tempfile.TemporaryDirectory() as tmp:
            logs = write_history(tmp, recs, nights, partitions, kind, noise, seed)
            rows, judged = run_changes(logs, os.path.join(tmp, 'changes'))
            changed = len({(r['key'], r['variable'], r['system_partition']) for r in rows})
            if kind == 'identical':
                out['series'] = judged
                out['identical: series with change points'] = changed
                out['identical: compare rows marked'] = run_compare(
                    logs, partitions, os.path.join(tmp, 'compare'))
            elif kind == 'step':
                out['step: throughput series found'] = (
                    step_found(rows, step_night, 7, 13)[0], len(recs) * partitions)
                out['step: other change points'] = step_found(rows, step_night, 7, 13)[1]
            else:
                out['3% step: series with change points'] = changed
    out['creep: found after weeks'] = creep_weeks(recs, noise, seed)
    return out


def passed(result):
    """Whether one seed's numbers meet the issue's targets."""
    found, total = result['step: throughput series found']
    marked, _ = result['identical: compare rows marked']
    return (result['identical: series with change points'] <= 0.01 * result['series']
            and marked == 0 and found == total and result['step: other change points'] == 0
            and result['3% step: series with change points'] == 0
            and result['creep: found after weeks'] is not None)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--perflog', help='real records to build on (default: a ReFrame run)')
    p.add_argument('--nights', type=int, default=365)
    p.add_argument('--partitions', type=int, default=4)
    p.add_argument('--noise', type=float, default=0.03)
    p.add_argument('--seeds', type=int, default=3)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.perflog or real_perflog(tmp)
        recs = templates(path)
    source = args.perflog or 'a ReFrame run: ' + ' '.join(SELECTION)
    print(f'{len(recs)} real record(s) from {source}; {args.nights} nights x '
          f'{args.partitions} partitions, noise {args.noise:.0%}\n')
    results = [prove(recs, args.nights, args.partitions, args.noise, seed)
               for seed in range(args.seeds)]
    print('| check | ' + ' | '.join(f'seed {i}' for i in range(args.seeds)) + ' |')
    print('|---|' + '---|' * args.seeds)
    for check in results[0]:
        print(f'| {check} | ' + ' | '.join(
            (f'{r[check][0]} of {r[check][1]}' if isinstance(r[check], tuple) else
             str(r[check])) for r in results) + ' |')
    ok = [passed(r) for r in results]
    print('| all targets met | ' + ' | '.join('yes' if x else 'NO' for x in ok) + ' |')
    return 0 if all(ok) else 1

if __name__ == '__main__':
    sys.exit(main())
