"""Fuzz the command lines by hand: many random options and metadata files through the real
CLIs, each run's output kept, so that ``grep -rn Traceback OUT`` must find nothing.

    python benchmarks/fuzz_cli.py --out fuzz-out --cases 60
    grep -rln Traceback fuzz-out          # nothing

CI runs the in-process properties (tests/test_fuzz_inputs.py) on few examples; this runs
``python -m payload``, ``python -m sizeshape_datasets``, ``ssb-references``,
``ssb-acceptance --dry-run`` and ``reframe --dry-run -S`` as subprocesses. A payload run
whose options happen to be valid trains on a tiny dataset; --timeout ends it.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)          # run as a script from a checkout
sys.path.insert(0, os.path.join(REPO, 'tests'))
from conftest import make_dataset  # noqa: E402
from test_fuzz_inputs import NASTY, options, subparser  # noqa: E402

from payload import cli as payload_cli  # noqa: E402
from sizeshape_datasets import __main__ as datasets_cli  # noqa: E402
from sizeshape_datasets import mame  # noqa: E402
from ssb_references.acceptance import command as acceptance  # noqa: E402
from ssb_contract.options import OPTIONS  # noqa: E402
from ssb_references.cli import references as references_cli  # noqa: E402

BIN = os.path.dirname(sys.executable)
# The workload options, and the tests' and the data fixture's own variables.
REFRAME_VARIABLES = [o.name for o in OPTIONS if not o.parameter] + [
    'models', 'memory_limit_gib', 'seed', 'scale', 'container_image', 'parallel_efficiency']


def datasets(out):
    """A tiny real dataset and spoiled copies of it: the --data-dir values to fuzz with."""
    good = make_dataset(os.path.join(out, 'data', 'good'))
    roots = [good, os.path.join(out, 'data', 'missing'), os.path.join(good, mame.METADATA_FILE)]
    for name, line in [('escape', '../../good/data/0.jpg'), ('absolute', '/etc/hostname'),
                       ('nul', 'a\0b.jpg'), ('latin1', 'caf\xe9.jpg')]:
        root = os.path.join(out, 'data', name)
        shutil.copytree(good, root)
        with open(os.path.join(root, mame.METADATA_FILE), 'a', encoding='latin-1') as f:
            f.write(f'{line},Oil on canvas,m,i,train,1,1,1,1\n')
        roots.append(root)
    return roots


def random_args(rng, parser, fixed, roots, n):
    args = list(fixed)
    for _ in range(rng.randint(0, n)):
        args += [rng.choice(options(parser)), rng.choice(NASTY + roots)]
    return args


def cases(rng, count, roots, out):
    """(name, argv) for each CLI."""
    for i in range(count):
        yield f'payload-{i}', [sys.executable, '-m', 'payload', *random_args(
            rng, payload_cli.parser(), ['--variant', rng.choice(['lrfs', 'hrvs']),
                                        '--data-dir', rng.choice(roots), '--epochs', '2'],
            roots, 3)]
        command = rng.choice(['make', 'pack', 'prepare', 'describe'])
        fixed = [command] + ([] if command == 'make' else [rng.choice(roots)])
        if command != 'describe':
            fixed += ['--out', os.path.join(out, 'made', str(i))]
        if command == 'prepare':
            fixed += ['--variant', 'hrvs']
        yield f'datasets-{i}', [sys.executable, '-m', 'sizeshape_datasets', *random_args(
            rng, subparser(datasets_cli.parser(), command), fixed, roots, 3)]
        command = rng.choice(['propose', 'diff', 'update', 'drift', 'report'])
        yield f'references-{i}', [os.path.join(BIN, 'ssb-references'), *random_args(
            rng, subparser(references_cli.parser(), command), [command], roots, 3)]
        yield f'acceptance-{i}', [os.path.join(BIN, 'ssb-acceptance'), *random_args(
            rng, acceptance.parser(), ['--out', os.path.join(out, 'acc'), '--dry-run', '--checks',
                                      os.path.join(REPO, 'reframe_tests')], roots, 2),
            '--', '-n', 'TrainingTest.*lrfs.*single']
        settings = [x for _ in range(rng.randint(1, 3)) for x in
                    ('-S', f'{rng.choice(REFRAME_VARIABLES)}={rng.choice(NASTY + roots)}')]
        yield f'reframe-{i}', [os.path.join(BIN, 'reframe'), '-c',
                               os.path.join(REPO, 'reframe_tests'), '--dry-run', '-n',
                               'TrainingTest.*single', *settings]


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--out', default='fuzz-out')
    p.add_argument('--cases', type=int, default=40, help='per CLI (default 40)')
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--timeout', type=float, default=60)
    args = p.parse_args()
    os.makedirs(args.out)
    roots = datasets(os.path.abspath(args.out))
    rng = random.Random(args.seed)
    work = os.path.join(os.path.abspath(args.out), 'work')
    os.makedirs(work)
    env = {k: v for k, v in os.environ.items() if not k.startswith(('RFM_', 'SSB_'))}
    env.update(PYTHONPATH=REPO, RFM_SQLITE_DB_FILE=os.path.join(work, 'results.db'))
    tracebacks = []
    for name, argv in cases(rng, args.cases, roots, os.path.abspath(args.out)):
        try:
            proc = subprocess.run(argv, cwd=work, env=env, capture_output=True,
                                  timeout=args.timeout)
            stdout, stderr, status = proc.stdout, proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as err:
            stdout, stderr, status = err.stdout or b'', err.stderr or b'', 'timeout'
        with open(os.path.join(args.out, f'{name}.txt'), 'wb') as f:
            f.write(repr(argv).encode(errors='backslashreplace') + b'\n')
            f.write(f'exit status: {status}\n'.encode() + stdout + b'\n--stderr--\n' + stderr)
        if b'Traceback' in stdout + stderr:
            tracebacks.append(name)
    print(f'{len(tracebacks)} traceback(s)' + (f': {", ".join(tracebacks)}' if tracebacks else ''))
    return 1 if tracebacks else 0


if __name__ == '__main__':
    sys.exit(main())
