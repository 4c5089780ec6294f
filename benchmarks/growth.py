#!/usr/bin/env python3
"""How do ``drift``, ``compare``, ``report`` and ``changes`` grow with history?
(docs/benchmarks.md, "Growth").

Histories of 30, 90, 365 and 1000 nights x 4 partitions are made from real perflog records
as ``changes_proof.py`` makes them (a short ReFrame run on the builtin generic system, or
``--perflog``), and a large site's: ``--large-partitions`` (250) x 1000 nights, 500,000
records of about 1.4 kB (680 MB). Each command runs as its own process under
``/usr/bin/time``: wall seconds, CPU seconds (user + system: this machine is shared, and
wall time waits for the other jobs) and peak memory, ``--repeats`` (3) times, commands
alternated, medians reported.

    python benchmarks/growth.py                 # a ReFrame run, then about 15 minutes
    python benchmarks/growth.py --perflog perflogs/generic/default/TrainingTest.log --repeats 1
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import changes_proof  # noqa: E402

TIME = '/usr/bin/time'
SELECTION = ['-n', 'TrainingTest.*single', '-S', 'epochs=3']
TARGETS = {'365 x 4': (10, 500), 'large': (60, 1024)}     # seconds, MiB (the issue's)


def commands(out):
    tool = os.path.join(os.path.dirname(sys.executable), 'ssb-references')
    return {
        'drift': [tool, 'drift', '--system', 'generic'],
        'compare': [tool, 'compare', '--system', 'generic:p0', '--system', 'generic:p1',
                    '--out', os.path.join(out, 'compare')],
        'report': [tool, 'report', '--system', 'generic', '--out', os.path.join(out, 'report')],
        'changes': [tool, 'changes', '--system', 'generic', '--out', os.path.join(out, 'changes')],
    }


def measure(cmd, cwd):
    """(wall s, CPU s, peak MiB) of one run of ``cmd``."""
    with tempfile.NamedTemporaryFile('r') as report:
        proc = subprocess.run([TIME, '-f', '%e %U %S %M', '-o', report.name, *cmd], cwd=cwd,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode not in (0, 1):           # drift: 1 when something drifted
            sys.exit(f'error: {" ".join(cmd[1:3])} exited {proc.returncode}: '
                     f'{proc.stderr.strip()[-500:]}')
        wall, user, system, kib = report.read().split()[-4:]
    return float(wall), float(user) + float(system), int(kib) / 1024


def history(root, recs, nights, partitions):
    """A directory holding perflogs/ of this history (identical nights, 3% noise)."""
    changes_proof.write_history(root, recs, nights, partitions, 'identical', 0.03, 0)
    return root


def grow(recs, sizes, repeats):
    """{(label, command): [(wall, cpu, MiB), ...]}, the commands alternated."""
    results = {}
    for label, nights, partitions in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            history(tmp, recs, nights, partitions)
            records = nights * partitions * len(recs)
            print(f'{label}: {records} records, '
                  f'{du(os.path.join(tmp, "perflogs")) / 2**20:.0f} MB', file=sys.stderr)
            for _ in range(repeats):
                for name, cmd in commands(tmp).items():
                    results.setdefault((label, records, name), []).append(measure(cmd, tmp))
    return results


def du(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def _verdict(wall, cpu, mib, target):
    """Met on wall time; on a shared machine, where other jobs stretch the wall time, the
    CPU time says whether the command itself would have."""
    seconds, limit = target
    if mib > limit:
        return 'MISSED'
    return 'met' if wall <= seconds else 'met on CPU only' if cpu <= seconds else 'MISSED'


def table(results):
    lines = ['| history | records | command | wall s | CPU s | peak MiB | target |',
             '|---|---|---|---|---|---|---|']
    for (label, records, name), runs in results.items():
        wall, cpu, mib = (statistics.median(x) for x in zip(*runs))
        target = TARGETS.get(label)
        met = '-' if target is None else (f'{_verdict(wall, cpu, mib, target)} '
                                          f'(< {target[0]} s, < {target[1]} MiB)')
        lines.append(f'| {label} | {records} | {name} | {wall:.1f} | {cpu:.1f} | {mib:.0f} | '
                     f'{met} |')
    return '\n'.join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--perflog', help='real records to build on (default: a ReFrame run)')
    p.add_argument('--repeats', type=int, default=3)
    p.add_argument('--large-partitions', type=int, default=250,
                   help='partitions of the large site, 1000 nights each (0: none)')
    args = p.parse_args(argv)
    if not os.access(TIME, os.X_OK):
        sys.exit(f'error: {TIME} is needed (Debian: apt-get install time)')
    with tempfile.TemporaryDirectory() as tmp:
        changes_proof.SELECTION[:] = SELECTION
        recs = changes_proof.templates(args.perflog or changes_proof.real_perflog(tmp))
    sizes = [(f'{n} x 4', n, 4) for n in (30, 90, 365, 1000)]
    if args.large_partitions:
        sizes.append(('large', 1000, args.large_partitions))
    print(f'{len(recs)} real record(s) a night and partition; medians of {args.repeats}\n')
    print(table(grow(recs, sizes, args.repeats)))


if __name__ == '__main__':
    main()
