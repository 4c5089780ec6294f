"""Command line of the payload: options, validation, and the one place errors are printed."""
import argparse
import json
import os
import sys
import time

from payload import MODELS, PayloadError
from sizeshape_datasets.shapes import parse_pixel_budget

VARIANTS = ('lrfs', 'hrvs')
HRVS_BATCHING = ('single', 'padded', 'bucketed')
PRECISIONS = ('float32', 'mixed_float16', 'mixed_bfloat16')
COMPUTE_DTYPE = {'float32': 'float32', 'mixed_float16': 'float16', 'mixed_bfloat16': 'bfloat16'}
EPOCH_TAG = 'SSB-EPOCH'
WORKER_RECORDS_PREFIX = 'ssb-worker-'
SUMMARY_TAG = 'SSB-SUMMARY'
# A run waiting on input for more than this share of its time is input-bound.
INPUT_BOUND_FRACTION = 0.1


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise PayloadError(message)


def parse_args(argv):
    p = _Parser(prog='python -m payload', description=__doc__)
    p.add_argument('--variant', required=True, choices=VARIANTS,
                   help='lrfs: low-resolution fixed shape; hrvs: high-resolution variable shape')
    p.add_argument('--model', default='smallcnn',
                   help=f'one of {", ".join(MODELS)} (default: smallcnn)')
    p.add_argument('--data-dir', required=True,
                   help='dataset root in the MAMe layout, or an HDF5 file made from one by '
                        '"python -m sizeshape_datasets pack"')
    p.add_argument('--subset', default='train', choices=('train', 'val', 'test'))
    p.add_argument('--epochs', type=int, default=3)
    p.add_argument('--batch-size', type=int,
                   help='per device; default: 128 for lrfs (MAMe baselines), 1 for hrvs (the paper\'s setting)')
    p.add_argument('--image-size', type=int, default=256, help='lrfs: images resized to this square')
    p.add_argument('--crop-size', type=int, default=224, help='lrfs: random square crop')
    p.add_argument('--pixel-budget', default='65k',
                   help='hrvs: resize every image to this many pixels, aspect ratio kept, '
                        'as the paper\'s R65k-VS and R360k-VS (e.g. 65k, 360k, 2m, or native '
                        'to keep each image as it is; default 65k)')
    p.add_argument('--no-upscale', dest='upscale', action='store_false',
                   help='hrvs: keep images smaller than the pixel budget at their native size')
    p.add_argument('--hrvs-batching', default='single', choices=HRVS_BATCHING,
                   help='hrvs: single (batch 1), padded (to the batch\'s largest image), '
                        'bucketed (padded to a bounded set of shapes)')
    p.add_argument('--retracing', default='per-shape', choices=('per-shape', 'reduced'),
                   help='per-shape: one graph per input shape (TensorFlow default); '
                        'reduced: tf.function(reduce_retracing=True)')
    p.add_argument('--strategy', default='auto', choices=('auto', 'default', 'mirrored', 'multi-worker'),
                   help='auto: multi-worker when several tasks are launched (srun -n N, or '
                        'TF_CONFIG), mirrored over several local GPUs, else default')
    p.add_argument('--precision', default='float32', choices=PRECISIONS,
                   help='Keras dtype policy (mixed_float16 adds loss scaling); default float32')
    p.add_argument('--step', default='split', choices=('split', 'fused'),
                   help='split: the gradient graph is traced per input shape and the optimizer '
                        'update once (default); fused: both in one graph, retraced whole per '
                        'shape (the common pattern, to measure the difference)')
    p.add_argument('--input-threads', type=int, default=0,
                   help='threads of the input pipeline\'s own pool (tf.data private thread '
                        'pool); 0: tf.data\'s default, shared with the training ops')
    p.add_argument('--intra-op-threads', type=int,
                   help='threads within one training op; default: the job\'s CPUs per task '
                        '(SLURM_CPUS_PER_TASK) where set, else TensorFlow\'s default (all cores)')
    p.add_argument('--inter-op-threads', type=int,
                   help='training ops run at once; default: TensorFlow\'s')
    p.add_argument('--jit-compile', action='store_true',
                   help='compile the training step with XLA (tf.function(jit_compile=True))')
    p.add_argument('--input', default='files', choices=('files', 'memory'),
                   help='files: read and decode every epoch (default); memory: read one epoch '
                        'before training and replay its batches from memory (the baseline '
                        'without input-pipeline cost)')
    p.add_argument('--stage-dir',
                   help='copy this worker\'s images into a private directory here (node-local '
                        'storage) before training, timed on its own; removed at the end')
    p.add_argument('--prepare', action='store_true',
                   help='decode and resize this worker\'s images once, before training (timed '
                        'on its own), and train from the prepared pixels; see '
                        '"python -m sizeshape_datasets prepare"')
    p.add_argument('--input-probe-seconds', type=float, default=10.0,
                   help='after training, drain the input pipeline alone for up to this long '
                        '(at most one epoch) to measure its capacity; 0: do not')
    p.add_argument('--peak-gflops', type=float,
                   help='peak GFLOP/s of the devices this run uses, for peak_fraction; '
                        'default: measured with a matmul before training')
    p.add_argument('--worker-records-dir', default='.',
                   help='multi-worker runs: workers other than 0 write their SSB lines to '
                        'ssb-worker-<index>.log here (default: the working directory)')
    p.add_argument('--learning-rate', type=float, default=1e-3)
    p.add_argument('--memory-limit-gib', type=float,
                   help='refuse images whose training step would need more; '
                        'default: host memory (cgroup limit) on CPU, no check on GPU')
    p.add_argument('--seed', type=int, default=0)
    args = p.parse_args(argv)
    validate(args)
    return args


def validate(args):
    if args.model not in MODELS:
        raise PayloadError(f'unknown model {args.model!r}; choose from {", ".join(MODELS)}')
    if args.epochs < 2:
        raise PayloadError('--epochs must be >= 2: steady-state time is the median of the '
                           'epochs after the first')
    if args.batch_size is None:
        args.batch_size = 128 if args.variant == 'lrfs' else 1
    if args.batch_size < 1:
        raise PayloadError(f'--batch-size must be >= 1, got {args.batch_size}')
    if args.variant == 'hrvs' and args.hrvs_batching == 'single' and args.batch_size != 1:
        raise PayloadError('--hrvs-batching single trains at batch 1; use padded or bucketed '
                           f'for --batch-size {args.batch_size}')
    if not 1 <= args.crop_size <= args.image_size:
        raise PayloadError('--crop-size must be between 1 and --image-size')
    if args.memory_limit_gib is not None and args.memory_limit_gib <= 0:
        raise PayloadError('--memory-limit-gib must be positive')
    for name in ('input_threads', 'intra_op_threads', 'inter_op_threads'):
        value = getattr(args, name)
        if value is not None and value < 0:
            raise PayloadError(f'--{name.replace("_", "-")} must be >= 0, got {value}')
    if args.intra_op_threads is None and os.environ.get('SLURM_CPUS_PER_TASK', '').isdigit():
        args.intra_op_threads = int(os.environ['SLURM_CPUS_PER_TASK'])
    if args.input_probe_seconds < 0:
        raise PayloadError('--input-probe-seconds must be >= 0')
    if args.peak_gflops is not None and not args.peak_gflops > 0:
        raise PayloadError(f'--peak-gflops must be positive, got {args.peak_gflops}')
    try:
        args.pixel_budget_px = parse_pixel_budget(args.pixel_budget)
    except ValueError as err:
        raise PayloadError(str(err)) from None


def emit(tag, record, stream=None):
    print(f'{tag} {json.dumps(record, sort_keys=True)}', file=stream or sys.stdout, flush=True)


def worker_records(args, worker):
    """Where this worker's SSB lines go: stdout for worker 0, a file of its own for the others.

    Launchers forward the tasks' output in chunks (Slurm: 1 KiB), so long lines of
    several workers sharing one stdout get interleaved mid-line.
    """
    if worker == 0:
        return sys.stdout
    return open(os.path.join(args.worker_records_dir, f'{WORKER_RECORDS_PREFIX}{worker}.log'), 'w')


def check_memory(args, records, memory_model, limit_bytes):
    from payload import data
    for record, (batch, height, width) in data.batch_shapes(
            records, args.variant, args.batch_size, args.image_size, args.crop_size,
            args.pixel_budget_px, args.hrvs_batching, args.upscale):
        need = memory_model.training_bytes(batch, height, width)
        if need > limit_bytes:
            raise PayloadError(
                f'image {record.path!r} ({record.width}x{record.height} px, trained as '
                f'{width}x{height} at batch {batch}) needs about {need / 2**30:.2f} GiB to train '
                f'{args.model}, over the memory limit of {limit_bytes / 2**30:.2f} GiB; '
                f'lower --pixel-budget or raise --memory-limit-gib')


def process_age_s():
    """Seconds since this process started (from /proc), else None."""
    try:
        with open('/proc/self/stat') as f:
            started_ticks = int(f.read().rsplit(')', 1)[1].split()[19])
        with open('/proc/uptime') as f:
            uptime = float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return round(uptime - started_ticks / os.sysconf('SC_CLK_TCK'), 2)


def peak(args, step, workers, local_devices):
    """(peak GFLOP/s of the whole run, where it comes from, seconds spent measuring)."""
    if args.peak_gflops is not None:
        return args.peak_gflops, 'option --peak-gflops', 0.0
    from payload import flops
    start = time.perf_counter()
    dtype = COMPUTE_DTYPE[args.precision]
    local, source = flops.measure_matmul_peak(dtype)
    total = step.global_sum(local * local_devices, workers)
    if local_devices > 1 or workers > 1:
        source += f' x {local_devices} device(s) per worker, summed over {workers} worker(s)'
    return total, source, time.perf_counter() - start


def worker_died(worker, workers, when, err):
    from payload import train
    return PayloadError(f'worker {worker} of {workers}: another worker died or stopped '
                        f'answering {when} ({train.describe_error(err)})')


def run(args):
    from sizeshape_datasets import hdf5, mame

    # Data problems are reported before the seconds that importing TensorFlow takes.
    try:
        records, class_names = hdf5.read_dataset(args.data_dir, args.subset)
    except mame.DatasetError as err:
        raise PayloadError(str(err)) from None

    import keras
    import tensorflow as tf

    from payload import distribute, local_data, models, resources

    local_data.check_prepared(records, args)
    tf.get_logger().setLevel('ERROR')   # retracing warnings: traces are counted and reported
    if args.intra_op_threads:           # before TensorFlow starts its thread pools
        tf.config.threading.set_intra_op_parallelism_threads(args.intra_op_threads)
    if args.inter_op_threads:
        tf.config.threading.set_inter_op_parallelism_threads(args.inter_op_threads)
    strategy, strategy_kind = distribute.make_strategy(args.strategy)   # before any other op
    worker, workers = distribute.worker_of(strategy)
    local_replicas = strategy.num_replicas_in_sync // workers
    # LR&FS trains on full batches only, so that it sees one input shape.
    per_step = args.batch_size * local_replicas
    if args.variant == 'lrfs' and len(records) // workers < per_step:
        raise PayloadError(f'{len(records)} images over {workers} worker(s) do not fill one '
                           f'LR&FS batch of {per_step}; lower --batch-size')
    shard = distribute.shard(records, worker, workers,
                             per_step if args.variant == 'lrfs' or local_replicas > 1 else 1)
    keras.utils.set_random_seed(args.seed)
    if args.memory_limit_gib is not None:
        limit = args.memory_limit_gib * 2**30
    elif not resources.gpus():
        limit = resources.host_memory_limit_bytes()
    else:
        limit = None
    if limit is not None:
        check_memory(args, shard, models.MemoryModel(args.model, len(class_names)), limit)

    out = worker_records(args, worker)
    with local_data.ready(args, shard, class_names, worker) as (shard, local_info):
        summary = train_and_summarise(args, shard, class_names, worker, workers, local_replicas,
                                      strategy, strategy_kind, out)
    summary.update(local_info)
    summary.update({
        'memory_limit_bytes': limit, 'dataset_images': len(records),
        'images_left_out': len(records) - workers * len(shard),
        'dataset': os.path.abspath(args.data_dir),
        'data_format': ('prepared' if hdf5.is_prepared(shard) else         # what was trained on
                        'hdf5' if isinstance(shard[0], hdf5.HDF5Record) else 'jpeg'),
    })
    emit(SUMMARY_TAG, summary, out)


def trained_pixels(args, shard):
    """(mean, max) pixels per trained image, from the planned shapes (padding excluded)."""
    from payload import data
    if args.variant == 'lrfs':
        return args.crop_size ** 2, args.crop_size ** 2
    pixels = [h * w for h, w in data.hrvs_targets(shard, args.pixel_budget_px, args.upscale)]
    return sum(pixels) / len(pixels), max(pixels)


def train_and_summarise(args, shard, class_names, worker, workers, local_replicas,
                        strategy, strategy_kind, out):
    import tensorflow as tf

    from payload import data, flops, models, resources, train

    def worker_dataset(_):
        if args.variant == 'lrfs':
            ds = data.lrfs_dataset(shard, args.image_size, args.crop_size,
                                   args.batch_size, args.seed + worker)
        else:
            ds = data.hrvs_dataset(shard, args.pixel_budget_px, args.hrvs_batching,
                                   args.batch_size, args.seed + worker, args.upscale)
        return data.with_threads(ds, args.input_threads)

    memory_input_s = None
    if args.input == 'memory':
        start = time.perf_counter()
        try:
            replay = data.in_memory(worker_dataset(None))
        except tf.errors.OpError as err:
            raise PayloadError(f'reading input: {train.describe_error(err)}') from None
        memory_input_s = time.perf_counter() - start
        dataset = strategy.distribute_datasets_from_function(lambda _: replay)
    else:
        dataset = strategy.distribute_datasets_from_function(worker_dataset)
    step = train.TrainingStep(strategy, lambda: models.build(args.model, len(class_names)),
                              args.learning_rate, args.retracing == 'reduced',
                              args.precision, args.jit_compile, args.step)
    try:
        peak_gflops, peak_source, peak_measure_s = peak(args, step, workers, local_replicas)
    except train.WORKER_FAILURES as err:
        raise worker_died(worker, workers, 'before training', err) from None
    setup_s = process_age_s()
    seen_shapes, epochs = set(), []
    for epoch in range(1, args.epochs + 1):
        try:
            epochs.append(train.run_epoch(epoch, dataset, step, seen_shapes, workers))
        except train.WORKER_FAILURES as err:
            raise worker_died(worker, workers, f'in epoch {epoch}', err) from None
        emit(EPOCH_TAG, {'worker': worker, **epochs[-1]}, out)
    summary = train.summarise(epochs, seen_shapes, step)
    input_images_per_s = None
    if args.input_probe_seconds > 0:
        images, seconds = data.input_capacity(worker_dataset(None), summary['steps_per_epoch'],
                                              args.input_probe_seconds)
        input_images_per_s = step.global_sum(images / seconds, workers)
    mean_pixels, max_pixels = trained_pixels(args, shard)
    summary.update({
        'input_images_per_s': input_images_per_s,
        'input_bound': summary['input_wait_fraction'] > INPUT_BOUND_FRACTION,
        'input_bound_fraction': INPUT_BOUND_FRACTION,
        'mean_pixels_per_image': mean_pixels, 'max_pixels_per_image': max_pixels,
        'peak_gflops': peak_gflops, 'peak_source': peak_source,
        'peak_fraction': summary['gflops_per_s'] / peak_gflops,
        'flops_convention': flops.CONVENTION, 'flops_count_s': step.flops.seconds,
        'peak_measure_s': peak_measure_s, 'setup_s': setup_s,
        'precision': args.precision, 'jit_compile': args.jit_compile, 'input': args.input,
        'memory_input_s': memory_input_s,
        'worker': worker, 'workers': workers, 'replicas': strategy.num_replicas_in_sync,
        'strategy': strategy_kind, 'variant': args.variant, 'model': args.model,
        'batch_size': args.batch_size, 'global_batch_size': args.batch_size * strategy.num_replicas_in_sync,
        'subset': args.subset, 'classes': len(class_names),
        'image_size': args.image_size if args.variant == 'lrfs' else None,
        'crop_size': args.crop_size if args.variant == 'lrfs' else None,
        'pixel_budget': args.pixel_budget if args.variant == 'hrvs' else None,
        'upscale': args.upscale if args.variant == 'hrvs' else None,
        'hrvs_batching': args.hrvs_batching if args.variant == 'hrvs' else None,
        'retracing': args.retracing, 'step': args.step, 'seed': args.seed,
        'input_threads': args.input_threads,
        'intra_op_threads': tf.config.threading.get_intra_op_parallelism_threads(),
        'inter_op_threads': tf.config.threading.get_inter_op_parallelism_threads(),
        'cpus_available': len(os.sched_getaffinity(0)),
        'device_memory': None if resources.gpus() else resources.DEVICE_MEMORY_ON_CPU,
        'devices': resources.device_names(), 'versions': resources.versions(),
    })
    return summary


def main(argv=None):
    os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')   # keep stderr for our own errors
    try:
        run(parse_args(sys.argv[1:] if argv is None else argv))
    except PayloadError as err:
        print(f'error: {err}', file=sys.stderr, flush=True)
        return 2
    except MemoryError:
        print('error: out of host memory', file=sys.stderr, flush=True)
        return 2
    return 0
