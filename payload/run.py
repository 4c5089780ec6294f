"""One run of the payload: read the data, stage and prepare it, train, and summarise.

Called by cli.py with the run's frozen settings (settings.py); every failure it can name is
a PayloadError.
"""
import dataclasses
import os
import socket
import sys
import time

from payload import PayloadError, container, energy, hostlock, protocol, summarise
from ssb_common import provenance
from ssb_contract.options import OPTIONS

# The payload's own settings its summary echoes, beside the workload options: the batch each
# device trained at, where the input came from, the seed.
PAYLOAD_SETTINGS = ('batch_size', 'input', 'seed')
# A run waiting on input for more than this share of its time is input-bound.
INPUT_BOUND_FRACTION = 0.1
COMPUTE_DTYPE = {'float32': 'float32', 'mixed_float16': 'float16', 'mixed_bfloat16': 'bfloat16'}


def peak(given, precision, step, workers, local_devices):
    """(peak GFLOP/s of the whole run: ``given`` (--peak-gflops), else measured in
    ``precision``; where it comes from; seconds spent measuring)."""
    if given is not None:
        return given, 'option --peak-gflops', 0.0
    from payload import flops
    start = time.perf_counter()
    dtype = COMPUTE_DTYPE[precision]
    local, source = flops.measure_matmul_peak(dtype)
    total = step.global_sum(local * local_devices, workers)
    if local_devices > 1 or workers > 1:
        source += f' x {local_devices} device(s) per worker, summed over {workers} worker(s)'
    return total, source, time.perf_counter() - start


def worker_died(worker, workers, when, err):
    from payload import train
    return PayloadError(f'worker {worker} of {workers}: another worker died or stopped '
                        f'answering {when} ({train.describe_error(err)})')


def run(settings):
    from sizeshape_datasets import hdf5, mame

    data, batches = settings.data, settings.batches
    # Before the first touch of the data: nothing of this run overlaps another's timing.
    lock = hostlock.HostLock().acquire() if settings.timing_lock == 'host' else None
    # Data problems are reported before the seconds that importing TensorFlow takes.
    try:
        records, class_names = hdf5.read_dataset(data.data_dir, data.subset)
        val_records = None
        if settings.validation.validate:
            val_subset = settings.validation.val_subset
            val_records, val_classes = hdf5.read_dataset(data.data_dir, val_subset)
            if val_classes != class_names:
                raise PayloadError(f'the {val_subset} subset has other classes than the '
                                   f'{data.subset} subset')
    except mame.DatasetError as err:
        raise PayloadError(str(err)) from None

    try:
        import keras
        import tensorflow as tf
    except ImportError as err:      # an image or environment without TensorFlow
        raise PayloadError(f'TensorFlow cannot be imported by {sys.executable}: {err}') from None

    from payload import distribute, local_data, models, resources

    local_data.check_prepared(records, batches, data.data_dir)
    tf.get_logger().setLevel('ERROR')   # retracing warnings: traces are counted and reported
    if settings.intra_op_threads:       # before TensorFlow starts its thread pools
        tf.config.threading.set_intra_op_parallelism_threads(settings.intra_op_threads)
    if settings.inter_op_threads:
        tf.config.threading.set_inter_op_parallelism_threads(settings.inter_op_threads)
    strategy, strategy_kind = distribute.make_strategy(settings.strategy)  # before any other op
    worker, workers = distribute.worker_of(strategy)
    local_replicas = strategy.num_replicas_in_sync // workers
    # LR&FS trains on full batches only, so that it sees one input shape.
    per_step = batches.batch_size * local_replicas
    if batches.variant == 'lrfs' and len(records) // workers < per_step:
        raise PayloadError(f'{len(records)} images over {workers} worker(s) do not fill one '
                           f'LR&FS batch of {per_step}; lower --batch-size')
    shard = distribute.shard(records, worker, workers,
                             per_step if batches.variant == 'lrfs' or local_replicas > 1 else 1)
    keras.utils.set_random_seed(settings.seed)
    if settings.memory_limit_gib is not None:
        limit = settings.memory_limit_gib * 2**30
    elif not resources.gpus():
        limit = resources.host_memory_limit_bytes()
    else:
        limit = None
    if limit is not None:
        resources.check_memory(batches, settings.step.model, shard,
                               models.MemoryModel(settings.step.model, len(class_names)), limit)

    place = Placement(strategy, strategy_kind, worker, workers, local_replicas)
    out = protocol.worker_records(settings.worker_records_dir, worker)
    with local_data.ready(data, batches, shard, class_names, worker) as (shard, local_info):
        summary = train_and_summarise(settings, shard, len(class_names), place, out,
                                      val_records)
    summary.update(local_info)
    summary.update(hostlock.summary(lock), timed_end_unix=time.time())
    summary.update({
        'memory_limit_bytes': limit, 'dataset_images': len(records),
        'images_left_out': len(records) - workers * len(shard),
        'dataset': os.path.abspath(data.data_dir),
        'dataset_fingerprint': hdf5.fingerprint(data.data_dir),
        'git_revision': provenance.git_revision(os.path.dirname(os.path.abspath(__file__))),
        'data_format': ('prepared' if hdf5.is_prepared(shard) else         # what was trained on
                        'hdf5' if isinstance(shard[0], hdf5.HDF5Record) else 'jpeg'),
    })
    protocol.emit(protocol.SUMMARY_TAG, summary, out)
    if settings.validation.target_accuracy is not None and not summary['target_reached']:
        from payload import accuracy
        raise accuracy.missed(summary)      # after the summary: its numbers stay in the log


def planned_steps(batches, shard, local_replicas=1):
    """Steps per epoch, where the batching fixes them (bucketed batches depend on the order).

    Each step takes one batch per local replica; the shard holds whole steps (LR&FS, and
    every variant with several local replicas), else padded batching's last one is partial.
    """
    if batches.variant == 'hrvs' and batches.hrvs_batching == 'bucketed':
        return None
    per_step = batches.batch_size * local_replicas
    return -(-len(shard) // per_step)


@dataclasses.dataclass(frozen=True)
class Placement:
    """Where this process trains: its strategy, which worker it is, its local replicas."""
    strategy: object
    strategy_kind: str
    worker: int
    workers: int
    local_replicas: int


def train_and_summarise(settings, shard, classes, place, out, val_records=None):
    """Train on this worker's shard; the summary's figures of the training itself."""
    from payload import data, flops, models, resources, train

    file_input, make_input, memory_input_s = input_pipeline(
        settings.batches, settings.data.input, settings.seed + place.worker, shard)
    kind = settings.step
    step = train.TrainingStep(place.strategy, lambda: models.build(kind.model, classes),
                              kind.learning_rate, kind.retracing == 'reduced',
                              kind.precision, kind.jit_compile, kind.training_step)
    try:
        peak_gflops, peak_source, peak_measure_s = peak(
            settings.peak_gflops, kind.precision, step, place.workers, place.local_replicas)
    except train.WORKER_FAILURES as err:
        raise worker_died(place.worker, place.workers, 'before training', err) from None
    meter, unavailable = energy.open_meter()
    if meter is None:
        print(f'energy: {unavailable}', file=sys.stderr, flush=True)
    setup_s = resources.process_age_s()
    epochs, seen_shapes, validation, clock = train_epochs(
        settings, shard, make_input, step, place, meter, out, val_records)

    summary = summarise.steady_state(epochs, seen_shapes, step)
    summary.update(summarise.validation(settings.validation.val_subset, epochs, validation,
                                        clock))
    summary.update(echo(settings))
    input_images_per_s = None
    if settings.input_probe_seconds > 0:
        # The pipeline from the files, also with --input memory: what the storage can feed.
        images, seconds = data.input_capacity(file_input(None), summary['steps_per_epoch'],
                                              settings.input_probe_seconds)
        input_images_per_s = step.global_sum(images / seconds, place.workers)
    mean_pixels, max_pixels = summarise.trained_pixels(settings.batches, shard)
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
        **placement_summary(settings.batches.batch_size, place),
    })
    return summary


def input_pipeline(batches, source, seed, shard):
    """(a function making this worker's tf.data input from the files, the one training
    reads (from ``source``: the files, or one epoch of them replayed from memory), the
    seconds spent reading it into memory, else None)."""
    import tensorflow as tf

    from payload import data, train

    def worker_dataset(_):
        if batches.variant == 'lrfs':
            ds = data.lrfs_dataset(shard, batches.image_size, batches.crop_size,
                                   batches.batch_size, seed)
        else:
            ds = data.hrvs_dataset(shard, batches.budget, batches.hrvs_batching,
                                   batches.batch_size, seed, batches.upscale)
        return data.with_threads(ds, batches.input_threads)

    if source != 'memory':
        return worker_dataset, worker_dataset, None
    start = time.perf_counter()
    try:
        replay = data.in_memory(worker_dataset(None))
    except tf.errors.OpError as err:
        raise PayloadError(f'reading input: {train.describe_error(err)}') from None
    return worker_dataset, (lambda _: replay), time.perf_counter() - start


def train_epochs(settings, shard, make_input, step, place, meter, out, val_records):
    """Run the epochs (to the target accuracy, where one is set), each emitted as it ends:
    (the epochs' records, the input shapes met, the validation, the target clock)."""
    from payload import accuracy, train

    # One iterator of the repeated dataset for the whole run, where the steps per epoch
    # are known (reshuffled and re-augmented each repetition as each new epoch was);
    # bucketed batching's epochs end where the data does: an iterator per epoch.
    steps_per_epoch = planned_steps(settings.batches, shard, place.local_replicas)
    if steps_per_epoch is None:
        dataset = place.strategy.distribute_datasets_from_function(make_input)
    else:
        dataset = place.strategy.distribute_datasets_from_function(
            lambda ctx: make_input(ctx).repeat())
    progress = (train.Progress(settings.progress_seconds, settings.epochs, steps_per_epoch,
                               settings.batches.batch_size * place.strategy.num_replicas_in_sync)
                if place.worker == 0 else None)
    clock = accuracy.TargetClock(settings.validation.target_accuracy)
    clock.start()                                       # the first touch of the data
    iterator = None if steps_per_epoch is None else iter(dataset)
    validation = (accuracy.Validation(settings.batches, settings.validation.val_subset,
                                      settings.step.retracing == 'reduced', step, val_records,
                                      place)
                  if settings.validation.validate else None)
    seen_shapes, epochs = set(), []
    for epoch in range(1, settings.epochs + 1):
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


def echo(settings):
    """The settings the summary echoes, so that a log says what produced it: the workload
    options the table marks as echoed (those of the other variant None), and the payload's
    own."""
    variant = settings.batches.variant
    echoed = {name: settings.value(name) for name in PAYLOAD_SETTINGS}
    for o in OPTIONS:
        if o.echoed:
            echoed[o.name] = settings.value(o.name) if o.variant in (None, variant) else None
    return echoed


def placement_summary(batch_size, place):
    """Where the run trained: workers, replicas, threads and devices."""
    import tensorflow as tf

    from payload import resources
    replicas = place.strategy.num_replicas_in_sync
    return {
        'worker': place.worker, 'workers': place.workers, 'host': socket.gethostname(),
        'replicas': replicas,
        'strategy': place.strategy_kind, 'global_batch_size': batch_size * replicas,
        'intra_op_threads': tf.config.threading.get_intra_op_parallelism_threads(),
        'inter_op_threads': tf.config.threading.get_inter_op_parallelism_threads(),
        'cpus_available': len(os.sched_getaffinity(0)),
        'device_memory': None if resources.gpus() else resources.DEVICE_MEMORY_ON_CPU,
        'devices': resources.device_names(), 'versions': resources.versions(),
        **container.detect(),
    }
