"""The training loop: a tf.function step with GradientTape, timed per epoch.

A hand-written loop (not keras.Model.fit) so that tracing, input waiting and
per-shape costs are each measured where they happen.
"""
import statistics
import time

import keras
import tensorflow as tf

from payload import PayloadError, resources


class TrainingStep:
    """One optimisation step; counts how often TensorFlow traces a new graph."""

    def __init__(self, model, learning_rate, reduce_retracing):
        self.model = model
        self.optimizer = keras.optimizers.Adam(learning_rate)
        self.optimizer.build(model.trainable_variables)
        self.loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        self.traces = 0
        self._step = tf.function(self._python_step, reduce_retracing=reduce_retracing)

    def _python_step(self, images, labels):
        self.traces += 1          # Python side effects run only while tracing
        with tf.GradientTape() as tape:
            loss = self.loss_fn(labels, self.model(images, training=True))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss

    def __call__(self, images, labels):
        return self._step(images, labels)


def run_epoch(epoch, dataset, step, seen_shapes):
    resources.reset_device_peaks()
    traces_before, shapes_before = step.traces, len(seen_shapes)
    images = pixels = processed_pixels = steps = 0
    loss_sum = tf.constant(0.0)
    input_wait = 0.0
    start = time.perf_counter()
    iterator = iter(dataset)
    while True:
        waited = time.perf_counter()
        try:
            batch = next(iterator, None)
        except tf.errors.OpError as err:
            raise PayloadError(f'reading input in epoch {epoch}: {_first_line(err)}') from None
        input_wait += time.perf_counter() - waited
        if batch is None:
            break
        x, y, true_hw, paths = batch
        batch_size, height, width = x.shape[0], x.shape[1], x.shape[2]
        seen_shapes.add((batch_size, height, width))
        try:
            loss = step(x, y)
        except tf.errors.ResourceExhaustedError:
            raise PayloadError(
                f'out of memory training on a batch of shape {batch_size}x{height}x{width}x3 '
                f'(first image {paths[0].numpy().decode()!r})') from None
        loss_sum += loss * batch_size
        images += batch_size
        pixels += int(tf.reduce_sum(tf.reduce_prod(true_hw, axis=1)))
        processed_pixels += batch_size * height * width
        steps += 1
    loss = float(loss_sum) / max(images, 1)   # also waits for the last step to finish
    seconds = time.perf_counter() - start
    return {
        'epoch': epoch, 'seconds': seconds, 'steps': steps, 'images': images,
        'pixels': pixels, 'images_per_s': images / seconds, 'mpx_per_s': pixels / seconds / 1e6,
        'padded_fraction': 1 - pixels / processed_pixels if processed_pixels else 0.0,
        'loss': loss, 'input_wait_s': input_wait,
        'new_shapes': len(seen_shapes) - shapes_before,
        'traces': step.traces - traces_before,
        'device_peak_bytes': resources.device_peak_bytes(),
        'host_peak_rss_bytes': resources.host_peak_rss_bytes(),
    }


def summarise(epochs, seen_shapes, step):
    """Steady state is the median of the epochs after the first, which pays for tracing."""
    first = epochs[0]
    steady = statistics.median(e['seconds'] for e in epochs[1:])
    device_peaks = [e['device_peak_bytes'] for e in epochs if e['device_peak_bytes'] is not None]
    return {
        'epochs': len(epochs),
        'images_per_epoch': first['images'],
        'first_epoch_s': first['seconds'],
        'steady_epoch_s': steady,
        'first_epoch_overhead_s': first['seconds'] - steady,
        'images_per_s': first['images'] / steady,
        'mpx_per_s': first['pixels'] / steady / 1e6,
        'padded_fraction': first['padded_fraction'],
        'distinct_shapes': len(seen_shapes),
        'traced_graphs': step.traces,
        'input_wait_s': sum(e['input_wait_s'] for e in epochs),
        'input_wait_fraction': sum(e['input_wait_s'] for e in epochs) / sum(e['seconds'] for e in epochs),
        'first_loss': first['loss'],
        'final_loss': epochs[-1]['loss'],
        'device_peak_bytes': max(device_peaks) if device_peaks else None,
        'host_peak_rss_bytes': max(e['host_peak_rss_bytes'] for e in epochs),
    }


def _first_line(err):
    return (err.message or str(err)).strip().splitlines()[0]
