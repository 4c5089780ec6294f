"""One run of the payload: read the data, stage and prepare it, train, and summarise.

Called by cli.py with validated arguments; every failure it can name is a PayloadError.
"""
import dataclasses
import os
import socket
import sys
import time

from payload import (PayloadError, container, contract, energy, hostlock, protocol, provenance,
                     summarise)

# A run waiting on input for more than this share of its time is input-bound.
INPUT_BOUND_FRACTION = 0.1
COMPUTE_DTYPE = {'float32': 'float32', 'mixed_float16': 'float16', 'mixed_bfloat16': 'bfloat16'}


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

    # Before the first touch of the data: nothing of this run overlaps another's timing.
    lock = hostlock.HostLock().acquire() if args.timing_lock == 'host' else None
    # Data problems are reported before the seconds that importing TensorFlow takes.
    try:
        records, class_names = hdf5.read_dataset(args.data_dir, args.subset)
        val_records = None
        if args.validate:
            val_records, val_classes = hdf5.read_dataset(args.data_dir, args.val_subset)
            if val_classes != class_names:
                raise PayloadError(f'the {args.val_subset} subset has other classes than the '
                                   f'{args.subset} subset')
    except mame.DatasetError as err:
        raise PayloadError(str(err)) from None

    try:
        import keras
        import tensorflow as tf
    except ImportError as err:      # an image or environment without TensorFlow
        raise PayloadError(f'TensorFlow cannot be imported by {sys.executable}: {err}') from None

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
        resources.check_memory(args, shard, models.MemoryModel(args.model, len(class_names)),
                               limit)

    place = Placement(strategy, strategy_kind, worker, workers, local_replicas)
    out = protocol.worker_records(args.worker_records_dir, worker)
    with local_data.ready(args, shard, class_names, worker) as (shard, local_info):
        summary = train_and_summarise(args, shard, len(class_names), place, out, val_records)
    summary.update(local_info)
    summary.update(hostlock.summary(lock), timed_end_unix=time.time())
    summary.update({
        'memory_limit_bytes': limit, 'dataset_images': len(records),
        'images_left_out': len(records) - workers * len(shard),
        'dataset': os.path.abspath(args.data_dir),
        'dataset_fingerprint': hdf5.fingerprint(args.data_dir),
        'git_revision': provenance.git_revision(os.path.dirname(os.path.abspath(__file__))),
        'data_format': ('prepared' if hdf5.is_prepared(shard) else         # what was trained on
                        'hdf5' if isinstance(shard[0], hdf5.HDF5Record) else 'jpeg'),
    })
    protocol.emit(protocol.SUMMARY_TAG, summary, out)
    if args.target_accuracy is not None and not summary['target_reached']:
        from payload import accuracy
        raise accuracy.missed(summary)      # after the summary: its numbers stay in the log


def planned_steps(args, shard, local_replicas=1):
    """Steps per epoch, where the batching fixes them (bucketed batches depend on the order).

    Each step takes one batch per local replica; the shard holds whole steps (LR&FS, and
    every variant with several local replicas), else padded batching's last one is partial.
    """
    if args.variant == 'hrvs' and args.hrvs_batching == 'bucketed':
        return None
    per_step = args.batch_size * local_replicas
    return -(-len(shard) // per_step)


@dataclasses.dataclass(frozen=True)
class Placement:
    """Where this process trains: its strategy, which worker it is, its local replicas."""
    strategy: object
    strategy_kind: str
    worker: int
    workers: int
    local_replicas: int


def train_and_summarise(args, shard, classes, place, out, val_records=None):
    """Train on this worker's shard; the summary's figures of the training itself."""
    from payload import data, flops, models, resources, train

    file_input, make_input, memory_input_s = input_pipeline(args, shard, place.worker)
    step = train.TrainingStep(place.strategy, lambda: models.build(args.model, classes),
                              args.learning_rate, args.retracing == 'reduced',
                              args.precision, args.jit_compile, args.step)
    try:
        peak_gflops, peak_source, peak_measure_s = peak(args, step, place.workers,
                                                        place.local_replicas)
    except train.WORKER_FAILURES as err:
        raise worker_died(place.worker, place.workers, 'before training', err) from None
    meter, unavailable = energy.open_meter()
    if meter is None:
        print(f'energy: {unavailable}', file=sys.stderr, flush=True)
    setup_s = resources.process_age_s()
    epochs, seen_shapes, validation, clock = train_epochs(
        args, shard, make_input, step, place, meter, out, val_records)

    summary = summarise.steady_state(epochs, seen_shapes, step)
    summary.update(summarise.validation(args, epochs, validation, clock))
    summary.update(settings(args))
    input_images_per_s = None
    if args.input_probe_seconds > 0:
        # The pipeline from the files, also with --input memory: what the storage can feed.
        images, seconds = data.input_capacity(file_input(None), summary['steps_per_epoch'],
                                              args.input_probe_seconds)
        input_images_per_s = step.global_sum(images / seconds, place.workers)
    mean_pixels, max_pixels = summarise.trained_pixels(args, shard)
    summary.update({
        'energy_source': meter.name if meter else None,
        'energy_note': (energy.resolution_note(meter, min(e['seconds'] for e in epochs))
                        if meter else unavailable),
        'input_images_per_s': input_images_per_s,
        'input_bound': summary['input_wait_fraction'] > INPUT_BOUND_FRACTION,
        'input_bound_fraction': INPUT_BOUND_FRACTION, 'memory_input_s': memory_input_s,
        'mean_pixels_per_image': mean_pixels, 'max_pixels_per_image': max_pixels,
        'peak_gflops': peak_gflops, 'peak_source': peak_source,
        'peak_fraction': summary['gflops_per_s'] / peak_gflops,
        'flops_convention': flops.CONVENTION, 'flops_count_s': step.flops.seconds,
        'peak_measure_s': peak_measure_s, 'setup_s': setup_s, 'classes': classes,
        **placement_summary(args, place),
    })
    return summary


def input_pipeline(args, shard, worker):
    """(a function making this worker's tf.data input from the files, the one training
    reads, the seconds spent reading it into memory with ``--input memory``, else None)."""
    import tensorflow as tf

    from payload import data, train

    def worker_dataset(_):
        if args.variant == 'lrfs':
            ds = data.lrfs_dataset(shard, args.image_size, args.crop_size,
                                   args.batch_size, args.seed + worker)
        else:
            ds = data.hrvs_dataset(shard, args.pixel_budget_px, args.hrvs_batching,
                                   args.batch_size, args.seed + worker, args.upscale)
        return data.with_threads(ds, args.input_threads)

    if args.input != 'memory':
        return worker_dataset, worker_dataset, None
    start = time.perf_counter()
    try:
        replay = data.in_memory(worker_dataset(None))
    except tf.errors.OpError as err:
        raise PayloadError(f'reading input: {train.describe_error(err)}') from None
    return worker_dataset, (lambda _: replay), time.perf_counter() - start


def train_epochs(args, shard, make_input, step, place, meter, out, val_records):
    """Run the epochs (to the target accuracy, where one is set), each emitted as it ends:
    (the epochs' records, the input shapes met, the validation, the target clock)."""
    from payload import accuracy, train

    # One iterator of the repeated dataset for the whole run, where the steps per epoch
    # are known (reshuffled and re-augmented each repetition as each new epoch was);
    # bucketed batching's epochs end where the data does: an iterator per epoch.
    steps_per_epoch = planned_steps(args, shard, place.local_replicas)
    if steps_per_epoch is None:
        dataset = place.strategy.distribute_datasets_from_function(make_input)
    else:
        dataset = place.strategy.distribute_datasets_from_function(
            lambda ctx: make_input(ctx).repeat())
    progress = (train.Progress(args.progress_seconds, args.epochs, steps_per_epoch,
                               args.batch_size * place.strategy.num_replicas_in_sync)
                if place.worker == 0 else None)
    clock = accuracy.TargetClock(args.target_accuracy)
    clock.start()                                       # the first touch of the data
    iterator = None if steps_per_epoch is None else iter(dataset)
    validation = (accuracy.Validation(args, step, val_records, place.worker, place.workers,
                                      place.local_replicas)
                  if args.validate else None)
    seen_shapes, epochs = set(), []
    for epoch in range(1, args.epochs + 1):
        try:
            epochs.append(train.run_epoch(epoch, dataset, step, seen_shapes, place.workers,
                                          progress, energy.EpochEnergy(meter), iterator,
                                          steps_per_epoch))
            if validation:
                epochs[-1].update(validation.evaluate())
                epochs[-1]['elapsed_s'] = clock.elapsed()
        except train.WORKER_FAILURES as err:
            raise worker_died(place.worker, place.workers, f'in epoch {epoch}', err) from None
        protocol.emit(protocol.EPOCH_TAG, {'worker': place.worker, **epochs[-1]}, out)
        # Steady-state figures need a second epoch, even when the first reached the target.
        if (validation and clock.reached(epoch, epochs[-1]['val_accuracy'],
                                         epochs[-1]['elapsed_s']) and epoch >= 2):
            break
    return epochs, seen_shapes, validation, clock


def settings(args):
    """The options the summary echoes (payload/contract.py); a variant's own are None in the
    other variant's runs."""
    echoed = {name: getattr(args, name) for name in contract.SUMMARY_SETTINGS}
    for variant, names in contract.SUMMARY_SETTINGS_OF_VARIANT.items():
        echoed.update({name: getattr(args, name) if args.variant == variant else None
                       for name in names})
    return echoed


def placement_summary(args, place):
    """Where the run trained: workers, replicas, threads and devices."""
    import tensorflow as tf

    from payload import resources
    replicas = place.strategy.num_replicas_in_sync
    return {
        'worker': place.worker, 'workers': place.workers, 'host': socket.gethostname(),
        'replicas': replicas,
        'strategy': place.strategy_kind, 'global_batch_size': args.batch_size * replicas,
        'intra_op_threads': tf.config.threading.get_intra_op_parallelism_threads(),
        'inter_op_threads': tf.config.threading.get_inter_op_parallelism_threads(),
        'cpus_available': len(os.sched_getaffinity(0)),
        'device_memory': None if resources.gpus() else resources.DEVICE_MEMORY_ON_CPU,
        'devices': resources.device_names(), 'versions': resources.versions(),
        **container.detect(),
    }
