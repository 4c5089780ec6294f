"""Command line of the payload: options, checks, the frozen settings they give (settings.py),
and the one place errors are printed."""
import argparse
import json
import math
import os
import sys

from payload import PayloadError, settings
from ssb_contract import checks, flags

# The payload names an option by its flag: '--batch-size 8'.
NAMING = checks.Naming(label=lambda o: o.flag, setting=lambda o, value: f'{o.flag} {value}')


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise PayloadError(message)


def parser():
    p = _Parser(prog='python -m payload', description=__doc__)
    flags.add_arguments(p)          # the workload options (ssb_contract/options.py)
    p.add_argument('--strategy', default='auto',
                   choices=('auto', 'default', 'mirrored', 'multi-worker'),
                   help='auto: multi-worker when several tasks are launched (srun -n N, or '
                        'TF_CONFIG), mirrored over several local GPUs, else default')
    p.add_argument('--intra-op-threads', type=int,
                   help='threads within one training op; default: the job\'s CPUs per task '
                        '(SLURM_CPUS_PER_TASK) where set, else TensorFlow\'s default (all cores)')
    p.add_argument('--inter-op-threads', type=int,
                   help='training ops run at once; default: TensorFlow\'s')
    p.add_argument('--input', default='files', choices=('files', 'memory'),
                   help='files: read and decode every epoch (default); memory: read one epoch '
                        'before training and replay its batches from memory (the baseline '
                        'without input-pipeline cost)')
    p.add_argument('--validate', action='store_true',
                   help='evaluate on --val-subset after every epoch, timed apart from training; '
                        'reports val loss and accuracy per epoch')
    p.add_argument('--progress-seconds', type=float, default=60.0,
                   help='print a progress line on stderr at most this often (epoch, steps, '
                        'img/s, time left); 0: never')
    p.add_argument('--input-probe-seconds', type=float, default=10.0,
                   help='after training, drain the input pipeline alone for up to this long '
                        '(at most one epoch) to measure its capacity; 0: do not')
    p.add_argument('--peak-gflops', type=float,
                   help='peak GFLOP/s of the devices this run uses, for peak_fraction; '
                        'default: measured with a matmul before training')
    p.add_argument('--worker-records-dir', default='.',
                   help='multi-worker runs: workers other than 0 write their SSB lines to '
                        'ssb-worker-<index>.log here (default: the working directory)')
    p.add_argument('--timing-lock', default='host', choices=('host', 'off'),
                   help='host: wait until no other timed payload run of yours is on this host, '
                        'and hold the host until this run ends (the ranks of one job hold it '
                        'together); off: run at once, sharing the host (default: host)')
    p.add_argument('--learning-rate', type=float, default=1e-3)
    p.add_argument('--memory-limit-gib', type=float,
                   help='refuse images whose training step would need more; '
                        'default: host memory (cgroup limit) on CPU, no check on GPU')
    p.add_argument('--seed', type=int, default=0)
    return p


def parse_args(argv, environ=os.environ):
    """The frozen settings of a command line (settings.py); PayloadError for one it refuses."""
    args = parser().parse_args(argv)
    workload = flags.values(args)
    check(args, workload, environ)
    slurm_cpus = environ.get('SLURM_CPUS_PER_TASK', '')
    values = {**vars(args), **workload,
              'batch_size': workload[f'{args.variant}_batch_size'],
              'validate': args.validate or args.target_accuracy is not None,
              # The job's CPUs per task, where Slurm says, else TensorFlow's default.
              'intra_op_threads': args.intra_op_threads if args.intra_op_threads is not None
              else int(slurm_cpus) if slurm_cpus.isdigit() else None}
    parts = {'batches': settings.of(settings.Batches, values),
             'step': settings.of(settings.Step, values),
             'data': settings.of(settings.Data, values),
             'validation': settings.of(settings.Validation, values)}
    return settings.of(settings.Settings, {**values, **parts})


def check(args, workload, environ):
    """Refuse what the payload cannot run, naming the option."""
    for name, value in vars(args).items():      # inf and NaN pass every comparison below
        if isinstance(value, float) and not math.isfinite(value):
            raise PayloadError(f'--{name.replace("_", "-")} must be a finite number, got {value}')
    if not args.learning_rate >= 0:      # 0: a run that times training without learning
        raise PayloadError(f'--learning-rate must be at least 0, got {args.learning_rate}')
    if not 0 <= args.seed < 2**32:
        raise PayloadError(f'--seed must be between 0 and 2**32 - 1, got {args.seed}')
    if args.progress_seconds < 0:
        raise PayloadError('--progress-seconds must be >= 0')
    for problem in checks.problems(workload, NAMING, args.variant):
        raise PayloadError(problem)
    if args.memory_limit_gib is not None and args.memory_limit_gib <= 0:
        raise PayloadError('--memory-limit-gib must be positive')
    for name in ('intra_op_threads', 'inter_op_threads'):
        value = getattr(args, name)
        if value is not None and value < 0:
            raise PayloadError(f'--{name.replace("_", "-")} must be >= 0, got {value}')
    check_tf_config(environ.get('TF_CONFIG'))
    if args.input_probe_seconds < 0:
        raise PayloadError('--input-probe-seconds must be >= 0')
    if args.peak_gflops is not None and not args.peak_gflops > 0:
        raise PayloadError(f'--peak-gflops must be positive, got {args.peak_gflops}')
    if (args.validate or args.target_accuracy is not None) and args.val_subset == args.subset:
        raise PayloadError(f'--validate evaluates on the subset it trains on '
                           f'({args.subset}): choose another --val-subset')


def main(argv=None):
    os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')   # keep stderr for our own errors
    try:
        from payload import run
        run.run(parse_args(sys.argv[1:] if argv is None else argv))
    except PayloadError as err:
        print(f'error: {err}', file=sys.stderr, flush=True)
        return 2
    except MemoryError:
        print('error: out of host memory', file=sys.stderr, flush=True)
        return 2
    return 0


def check_tf_config(text):
    """A hand-written TF_CONFIG is checked before the host lock and the strategy read it."""
    if not text:
        return
    try:
        config = json.loads(text)
        ok = (isinstance(config, dict) and isinstance(config.get('cluster', {}), dict)
              and all(isinstance(tasks, list) for tasks in config.get('cluster', {}).values()))
    except ValueError:
        ok = False
    if not ok:
        raise PayloadError('TF_CONFIG is not a JSON object with a "cluster" of task lists, as '
                           '{"cluster": {"worker": ["host:port", ...]}, "task": {"type": '
                           f'"worker", "index": 0}}}}: {text[:200]!r}')
