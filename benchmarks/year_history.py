"""A year of nightly history, made from real perflog records: what the dashboard is sized and
tested on (benchmarks/dashboard.py, tests/test_dashboard*.py).

The records of one real ReFrame run (``SEED_COMMAND``, or any run's perflog directory) are
copied into ``nights`` nightly sessions on each of several partitions, every value multiplied
by seeded noise: a speed factor for times and rates (a slower night has longer epochs and
lower throughputs), its own noise for memory, none for counts. Events a sysadmin should see:

- a driver update on the second partition at 55% of the year: HR&VS 30% slower, LR&FS 8%
  slower, so the gap widens;
- a new payload series (``x.y+1.0``) at 40% of the year: drift's history starts again;
- a new git revision every 30 nights; a node list that changes every night;
- one night in 60 fails its sanity check (a record with no values, as ReFrame logs it), one
  in 90 fails a reference (``result`` fail, values kept).

    python benchmarks/year_history.py --seed-dir PERFLOGS --out DIR [--nights 365]
"""
import argparse
import datetime
import hashlib
import os
import random
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)            # run as a script from a checkout
from ssb_contract import perf  # noqa: E402
from ssb_references.runs import perflog  # noqa: E402

#: The real run that gives the seed records: both variants and their gap, 3 epochs each.
SEED_COMMAND = ['-r', '-n', 'SizeShapeGap.*scale=single', '-S', 'epochs=3']
TESTS = ('TrainingTest', 'SizeShapeGap')
PARTITIONS = ('cpu', 'gpu', 'bigmem', 'a100')
START = datetime.datetime(2025, 1, 1, 2, 0, tzinfo=datetime.timezone.utc)   # a year, all past
UPDATE_AT, NEW_SERIES_AT = 0.55, 0.40          # fractions of the year
SLOWER = {'hrvs': 1.30, 'lrfs': 1.08}          # after the driver update, second partition
NOISE, MEMORY_NOISE = 0.03, 0.01               # lognormal sigmas


def run_seed(workdir):
    """Run ``SEED_COMMAND`` on ReFrame's generic system in ``workdir``; its perflog directory."""
    reframe = os.path.join(os.path.dirname(sys.executable), 'reframe')
    env = {k: v for k, v in os.environ.items() if not k.startswith('RFM_')}
    proc = subprocess.run([reframe, '-c', os.path.join(REPO, 'reframe_tests'), *SEED_COMMAND],
                          cwd=workdir, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f'the seed run failed:\n{proc.stdout[-3000:]}')
    return os.path.join(workdir, 'perflogs')


def seed_records(perflog_dir):
    """{test: [the newest record of each test case (name), TrainingTest's lrfs first]} of the
    scale=single cases in a real run's perflogs."""
    out = {}
    for test in TESTS:
        newest = {}
        for path in perflog.files(perflog_dir, None, test):
            for _, rec in perflog.records(path):
                if rec.get('scale', 'single') == 'single' and rec.get('result') == 'pass':
                    newest[rec['name']] = rec
        out[test] = sorted(newest.values(), key=lambda r: r.get('variant') != 'lrfs')
    if not out['TrainingTest']:
        raise ValueError(f'{perflog_dir}: no passed TrainingTest scale=single record')
    return out


def _scaled(name, value, speed, memory):
    """``value`` of the variable ``name`` on a night ``speed`` times slower (a gap ratio:
    HR&VS's factor over LR&FS's), its peak memory ``memory`` times larger."""
    pol = perf.BY_NAME.get(name)
    if pol is None or pol.better == 'exact':
        return value
    if 'memory' in name:
        return value * memory
    if pol.better == 'higher':                   # rates
        return value / speed
    return value * speed if pol.unit in ('s', 'ratio') else value   # times; fractions kept


def _revision(night):
    return hashlib.sha1(f'revision {night // 30}'.encode()).hexdigest()


def _series(version, night, nights):
    if night < NEW_SERIES_AT * nights:
        return version
    major, minor = (version.split('.') + ['0'])[:2]
    return f'{major}.{int(minor) + 1}.0'


def _failure(index, night):
    """How a partition's night fails: 'sanity', 'reference' or None."""
    if index == 0 and night % 60 == 59:
        return 'sanity'
    if index == 2 and night % 90 == 89:
        return 'reference'
    return None


def night_records(seeds, partition, index, night, nights, rng, system):
    """{test: records} of one partition's night: TrainingTest's variants, then their gap."""
    when = START + datetime.timedelta(days=night, minutes=7 * index)
    updated = index == 1 and night >= UPDATE_AT * nights
    speed = {v: rng.lognormvariate(0, NOISE) * (SLOWER[v] if updated else 1.0)
             for v in SLOWER}
    failure = _failure(index, night)
    nodes = f'{partition}-{rng.randrange(1, 65):03d}'
    out = {}
    for test, records in seeds.items():
        for k, seed in enumerate(records):
            variant = seed.get('variant')
            factor = speed[variant] if variant in speed else speed['hrvs'] / speed['lrfs']
            memory = rng.lognormvariate(0, MEMORY_NOISE)
            done = when + datetime.timedelta(minutes=5 * (k + 1) + 10 * (test != 'TrainingTest'))
            rec = {name: repr(_scaled(name[:-len('_value')], float(text), factor, memory))
                   if name.endswith('_value') else text for name, text in seed.items()}
            rec.update(system=system, partition=partition, job_nodelist=nodes,
                       job_completion_time_unix=repr(done.timestamp()),
                       job_completion_time=done.strftime('%Y-%m-%dT%H:%M:%S'),
                       jobid=str(100000 + night * 40 + index * 10 + k),
                       git_revision=_revision(night),
                       payload_version=_series(seed.get('payload_version', '1.0.0'), night,
                                               nights))
            if failure:
                rec['result'] = 'fail'
            if failure == 'sanity':     # ReFrame logs no values for a failed sanity check
                rec = {n: v for n, v in rec.items()
                       if n.rsplit('_', 1)[-1] not in ('value', 'unit', 'ref', 'thres')}
            out.setdefault(test, []).append(rec)
    return out


def write_year(seeds, out_dir, *, system='cluster', partitions=PARTITIONS, nights=365, seed=0):
    """Perflogs ``out_dir/<system>/<partition>/<test>.log`` of ``nights`` nights (a header
    line again wherever the fields change, as ReFrame writes them); their paths."""
    rng = random.Random(seed)
    paths = []
    for index, partition in enumerate(partitions):
        lines, headers = {test: [] for test in seeds}, {}
        for night in range(nights):
            for test, recs in night_records(seeds, partition, index, night, nights, rng,
                                            system).items():
                for rec in recs:
                    if headers.get(test) != list(rec):
                        headers[test] = list(rec)
                        lines[test].append('|'.join(rec))
                    lines[test].append('|'.join(rec.values()))
        for test, test_lines in lines.items():
            # A directory name holds no '/': the record's own names are as given.
            path = os.path.join(out_dir, system.replace('/', '_'), partition.replace('/', '_'),
                                f'{test}.log')
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'w') as f:
                f.write('\n'.join(test_lines) + '\n')
            paths.append(path)
    return paths


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--seed-dir', metavar='DIR',
                   help='perflogs of a real run (default: run reframe ' + ' '.join(SEED_COMMAND)
                   + ' in OUT/seed first, about a minute)')
    p.add_argument('--out', required=True, metavar='DIR')
    p.add_argument('--nights', type=int, default=365)
    p.add_argument('--seed', type=int, default=0)
    args = p.parse_args(argv)
    seed_dir = args.seed_dir
    if seed_dir is None:
        os.makedirs(os.path.join(args.out, 'seed'), exist_ok=True)
        seed_dir = run_seed(os.path.join(args.out, 'seed'))
    paths = write_year(seed_records(seed_dir), os.path.join(args.out, 'perflogs'),
                       nights=args.nights, seed=args.seed)
    print(f'wrote {len(paths)} perflogs of {args.nights} nights under '
          f'{os.path.join(args.out, "perflogs")}')


if __name__ == '__main__':
    main()
