"""The training loop: a tf.function step under a tf.distribute strategy, timed per epoch.

A hand-written loop (not keras.Model.fit) so that tracing, input waiting and
per-shape costs are each measured where they happen.
"""
import collections
import datetime
import re
import sys
import time

import keras
import tensorflow as tf

from payload import PayloadError, flops, resources
from ssb_contract.options import STEPS

# Errors by which TensorFlow reports that another worker died or stopped answering.
WORKER_FAILURES = (tf.errors.UnavailableError, tf.errors.DeadlineExceededError,
                   tf.errors.CancelledError, tf.errors.AbortedError)
# What one step returns, summed over every replica of every worker.
LOSS_SUM, IMAGES, PIXELS, PROCESSED_PIXELS = range(4)


class TrainingStep:
    """One optimisation step; counts how often TensorFlow traces a new graph.

    ``step='split'`` (the default) traces the shape-dependent part, forward and
    backward, once per input shape, and the optimizer update, whose variables
    never change shape, once in all: a new HR&VS shape then costs only the
    gradient graph. ``step='fused'`` holds both in one function, retraced whole
    for every shape (the common pattern, kept to measure the difference).

    ``precision`` is a Keras dtype policy, set globally before the model is built
    (the final Dense layer stays float32); mixed_float16 scales the loss with
    keras' LossScaleOptimizer. ``jit_compile`` compiles each replica's
    shape-dependent part with XLA (the cross-replica reduction stays outside).
    """

    def __init__(self, strategy, build_model, learning_rate, reduce_retracing,
                 precision='float32', jit_compile=False, step='split'):
        if step not in STEPS:
            raise ValueError(f'unknown step {step!r}; choose from {STEPS}')
        self.strategy = strategy
        keras.mixed_precision.set_global_policy(precision)
        with strategy.scope():
            self.model = build_model()
            optimizer = keras.optimizers.Adam(learning_rate)
            if precision == 'mixed_float16':
                optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
            self.optimizer = optimizer
            self.optimizer.build(self.model.trainable_variables)
        self.scale_loss = precision == 'mixed_float16'
        self.jit_compile = jit_compile
        self.loss_fn = keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction='none')
        self.flops = flops.FlopCounter(self.model)
        self.traces = 0
        replica = self._replica_fused if step == 'fused' else self._replica_gradients
        self._replica = (tf.function(replica, jit_compile=True, reduce_retracing=reduce_retracing)
                         if jit_compile else replica)
        self._step = tf.function(self._global_fused if step == 'fused' else self._global_gradients,
                                 reduce_retracing=reduce_retracing)
        self._apply = None if step == 'fused' else tf.function(self._global_apply)

    def _gradients(self, images, labels, true_hw):
        variables = self.model.trainable_variables
        with tf.GradientTape() as tape:
            per_image = self.loss_fn(labels, self.model(images, training=True))
            loss = tf.nn.compute_average_loss(per_image)      # mean over the global batch
            if self.scale_loss:
                loss = self.optimizer.scale_loss(loss)
        shape = tf.cast(tf.shape(images), tf.float64)
        totals = tf.stack([tf.reduce_sum(tf.cast(per_image, tf.float64)), shape[0],
                           tf.reduce_sum(tf.reduce_prod(tf.cast(true_hw, tf.float64), axis=1)),
                           shape[0] * shape[1] * shape[2]])
        return tape.gradient(loss, variables), totals

    def _replica_fused(self, images, labels, true_hw):
        gradients, totals = self._gradients(images, labels, true_hw)
        self.optimizer.apply_gradients(zip(gradients, self.model.trainable_variables))
        return totals

    def _replica_gradients(self, images, labels, true_hw):
        return self._gradients(images, labels, true_hw)

    def _replica_apply(self, gradients):
        # tf.identity places each gradient on this replica's device: gradients that
        # arrive as function inputs have none, and the strategy's all-reduce (inside
        # apply_gradients) needs it.
        gradients = [tf.identity(g) for g in gradients]
        self.optimizer.apply_gradients(zip(gradients, self.model.trainable_variables))

    def _global_fused(self, images, labels, true_hw):
        self.traces += 1          # Python side effects run only while tracing
        per_replica = self.strategy.run(self._replica, args=(images, labels, true_hw))
        return self.strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)

    def _global_gradients(self, images, labels, true_hw):
        self.traces += 1
        gradients, totals = self.strategy.run(self._replica, args=(images, labels, true_hw))
        return gradients, self.strategy.reduce(tf.distribute.ReduceOp.SUM, totals, axis=None)

    def _global_apply(self, gradients):
        self.strategy.run(self._replica_apply, args=(gradients,))

    def trace(self, images, labels, true_hw):
        """Trace the shape-dependent graph for this batch's shape now; returns seconds.

        Called before the first step of a new shape, so that tracing (Python and graph
        building) is timed apart from what the first run adds (graph optimisation,
        XLA compilation, kernel autotuning).
        """
        start = time.perf_counter()
        self._step.get_concrete_function(images, labels, true_hw)
        return time.perf_counter() - start

    def __call__(self, images, labels, true_hw):
        """Run one step; returns the global (loss sum, images, pixels, processed pixels)."""
        if self._apply is None:
            return self._step(images, labels, true_hw)
        gradients, totals = self._step(images, labels, true_hw)
        self._apply(gradients)
        return totals

    def global_sum(self, value, workers):
        """Sum a host number over the workers (one collective); the value itself for one worker."""
        if workers == 1:
            return value
        if not hasattr(self, '_sum'):
            local = self.strategy.num_replicas_in_sync // workers

            @tf.function
            def total(x):
                per_replica = self.strategy.run(lambda: x / local)
                return self.strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)
            self._sum = total
        return float(self._sum(tf.constant(value, tf.float64)))


class Progress:
    """A line on stderr at most every ``every`` seconds while training: epoch, steps done of
    the epoch's, images/s so far in the epoch and the time left. A person's view of a long
    run (``tail -f`` the job's error file); no record: it has no SSB tag and is never parsed.
    """

    def __init__(self, every, epochs, planned_steps=None, images_per_step=1, stream=None):
        self.every, self.epochs, self.steps = every, epochs, planned_steps
        self.images_per_step, self.stream = images_per_step, stream or sys.stderr
        self.last = time.perf_counter()

    def update(self, epoch, steps, started):
        now = time.perf_counter()
        if self.every <= 0 or now - self.last < self.every:
            return
        self.last = now
        elapsed = now - started
        rate = steps / elapsed
        text = f'progress: epoch {epoch}/{self.epochs}, step {steps}'
        if self.steps:
            left = (self.steps - steps) + (self.epochs - epoch) * self.steps
            text += f'/{self.steps}, eta {datetime.timedelta(seconds=round(left / rate))}'
        print(f'{text}, {rate * self.images_per_step:.1f} img/s in this epoch', file=self.stream,
              flush=True)

    def epoch_done(self, steps):
        self.steps = steps            # later epochs take as many


def run_epoch(epoch, dataset, step, seen_shapes, workers=1, progress=None, energy=None,
              iterator=None, steps_per_epoch=None):
    """Train one epoch: over a fresh iterator of ``dataset`` to its end, or, given the run's
    own ``iterator`` of the repeated dataset, for ``steps_per_epoch`` steps.

    One iterator for the whole run is what a careful training loop keeps: releasing a
    tf.data iterator at every epoch's end took up to 2.4 s (its pipeline's threads shut
    down), measured against a reference step in benchmarks/run.py.
    """
    resources.reset_device_peaks()
    energy_started = energy.start() if energy else None
    traces_before, shapes_before = step.traces, len(seen_shapes)
    totals = tf.zeros([4], tf.float64)
    steps, input_wait = 0, 0.0
    step_shapes = collections.Counter()         # FLOPs are counted after the clock stops
    new_shapes = {'seconds': 0.0, 'graph_build_s': 0.0, 'pixels': 0.0}
    start = time.perf_counter()
    own_iterator = iterator is None
    if own_iterator:
        iterator = iter(dataset)
    while steps_per_epoch is None or steps < steps_per_epoch:
        waited = time.perf_counter()
        try:
            batch = next(iterator, None)
        except WORKER_FAILURES:
            raise
        except tf.errors.OpError as err:
            raise PayloadError(f'reading input in epoch {epoch}: {describe_error(err)}') from None
        input_wait += time.perf_counter() - waited
        if batch is None:
            break
        images, labels, true_hw = batch
        local_shapes = [tuple(x.shape[:3]) for x in
                        step.strategy.experimental_local_results(images)]
        new_shape = not seen_shapes.issuperset(local_shapes)
        seen_shapes.update(local_shapes)
        step_shapes.update(local_shapes)
        try:
            if new_shape:
                # Timed on its own, synchronously: what a new shape costs (summarise.py).
                totals.numpy()
                began = time.perf_counter()
                new_shapes['graph_build_s'] += step.trace(images, labels, true_hw)
                result = step(images, labels, true_hw)
                new_shapes['pixels'] += float(result[PROCESSED_PIXELS])
                new_shapes['seconds'] += time.perf_counter() - began
            else:
                result = step(images, labels, true_hw)
            totals += result
        except tf.errors.ResourceExhaustedError:
            raise PayloadError('out of memory training on a batch of shape '
                               f'{"x".join(map(str, local_shapes[0]))}x3') from None
        steps += 1
        if progress:
            progress.update(epoch, steps, start)
    if own_iterator:
        # Releasing the iterator can take a noticeable time (its pipeline shuts down):
        # it belongs to the epoch, not to the gap between epochs.
        del iterator
    loss_sum, images, pixels, processed = totals.numpy()   # waits for the last step
    seconds = time.perf_counter() - start
    if progress:
        progress.epoch_done(steps)
    joules = energy.record(energy_started, seconds, int(images)) if energy else {}
    gflops = step.global_sum(step.flops.training(step_shapes), workers) / 1e9
    return {
        'epoch': epoch, 'seconds': seconds, 'steps': steps, 'images': int(images),
        'pixels': int(pixels), 'images_per_s': images / seconds,
        'mpx_per_s': pixels / seconds / 1e6,
        'padded_fraction': 1 - pixels / processed if processed else 0.0,
        'gflops': gflops, 'gflops_per_s': gflops / seconds,
        'loss': loss_sum / max(images, 1), 'input_wait_s': input_wait,
        'new_shapes': len(seen_shapes) - shapes_before,
        'new_shape_steps_s': new_shapes['seconds'],
        'new_shape_graph_build_s': new_shapes['graph_build_s'],
        'new_shape_pixels': int(new_shapes['pixels']),
        'processed_pixels': int(processed),
        'traces': step.traces - traces_before,
        'device_peak_bytes': resources.device_peak_bytes(),
        'host_peak_rss_bytes': resources.host_peak_rss_bytes(),
        **joules,
    }


def describe_error(err):
    """The informative part of a TensorFlow error, on one line."""
    text = err.message or str(err)
    grpc = re.search(r'grpc_message:"([^"]+)"', text)
    if grpc:
        return grpc.group(1)
    text = re.sub(r'\{\{function_node [^}]*\}\}', '', text).replace('Graph execution error:', '')
    return ' '.join(text.split())[:300] or type(err).__name__
