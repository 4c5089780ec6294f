"""Validation after every epoch, and time to a target accuracy.

Time to accuracy follows the DawnBench and MLPerf Training rule: reach a fixed
validation accuracy on a fixed dataset; the clock runs from the first touch of
the data to the end of the evaluation that reached it, and excludes model set-up.
Evaluation is timed on its own: epoch times and throughputs stay training only.
"""
import time

import keras
import tensorflow as tf

from payload import PayloadError, distribute

# What one evaluation step returns, summed over every replica of every worker.
LOSS_SUM, CORRECT, IMAGES = range(3)


class Validation:
    """Evaluates the model on this worker's share of the validation subset."""

    def __init__(self, batches, subset, reduce_retracing, step, records, place):
        """``records`` of ``subset``, made into ``batches`` as training makes them, on the
        worker and replicas of ``place``."""
        from payload import data
        # Several replicas evaluate whole steps each (the remainder is left out, as in
        # training); one replica evaluates every image.
        per_step = batches.batch_size * place.local_replicas
        self.shard = distribute.shard(records, place.worker, place.workers,
                                      per_step if place.local_replicas > 1 else 1)
        if not self.shard:
            raise PayloadError(f'the {subset} subset ({len(records)} images) has '
                               f'none for worker {place.worker} of {place.workers}')
        self.images_left_out = len(records) - place.workers * len(self.shard)
        self.strategy = step.strategy
        self.steps = -(-len(self.shard) // per_step)

        def make(_):
            return data.with_threads(data.eval_dataset(self.shard, batches).repeat(),
                                     batches.input_threads)
        # One iterator for the run, as in training: releasing one costs seconds.
        self.iterator = iter(self.strategy.distribute_datasets_from_function(make))
        self._step = self._make_step(step.model, reduce_retracing)
        self.traces = 0

    def _make_step(self, model, reduce_retracing):
        loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction='none')

        def replica(images, labels):
            logits = model(images, training=False)
            per_image = tf.cast(loss_fn(labels, logits), tf.float64)
            correct = tf.equal(tf.cast(tf.argmax(logits, axis=-1), labels.dtype), labels)
            return tf.stack([tf.reduce_sum(per_image),
                             tf.reduce_sum(tf.cast(correct, tf.float64)),
                             tf.cast(tf.shape(images)[0], tf.float64)])

        @tf.function(reduce_retracing=reduce_retracing)
        def evaluate(images, labels):
            self.traces += 1          # Python side effects run only while tracing
            per_replica = self.strategy.run(replica, args=(images, labels))
            return self.strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)
        return evaluate

    def evaluate(self):
        """{'val_loss', 'val_accuracy', 'val_images', 'val_seconds'} over the whole subset."""
        start = time.perf_counter()
        totals = tf.zeros([3], tf.float64)
        for _ in range(self.steps):
            try:
                images, labels = next(self.iterator)
            except tf.errors.OpError as err:
                from payload import train
                if isinstance(err, train.WORKER_FAILURES):
                    raise
                raise PayloadError(f'reading validation input: {train.describe_error(err)}') \
                    from None
            totals += self._step(images, labels)
        loss_sum, correct, images = totals.numpy()
        return {'val_loss': loss_sum / images, 'val_accuracy': correct / images,
                'val_images': int(images), 'val_seconds': time.perf_counter() - start}


class TargetClock:
    """Epochs and seconds to a target validation accuracy.

    ``start()`` is called at the first touch of the data (model and input set-up
    done); ``reached(...)`` after each evaluation.
    """

    def __init__(self, target):
        self.target = target
        self.started = None
        self.epochs = self.seconds = None
        self.best = (None, None)          # (accuracy, epoch)

    def start(self):
        self.started = time.perf_counter()

    def elapsed(self):
        return time.perf_counter() - self.started

    def reached(self, epoch, accuracy, elapsed):
        """Whether the target is reached, given the evaluation that ended ``elapsed``
        seconds after the start."""
        if self.best[0] is None or accuracy > self.best[0]:
            self.best = (accuracy, epoch)
        if self.target is not None and self.epochs is None and accuracy >= self.target:
            self.epochs, self.seconds = epoch, elapsed
        return self.epochs is not None

    def summary(self):
        return {'target_accuracy': self.target, 'target_reached': self.epochs is not None,
                'epochs_to_target': self.epochs, 'seconds_to_target': self.seconds,
                'best_val_accuracy': self.best[0], 'best_val_epoch': self.best[1]}


def missed(summary):
    """The error of a run whose epochs ended before the target accuracy."""
    return PayloadError(
        f'target accuracy {summary["target_accuracy"]:g} not reached in {summary["epochs"]} '
        f'epochs (best val accuracy {summary["best_val_accuracy"]:.4f} at epoch '
        f'{summary["best_val_epoch"]}); raise --epochs or lower --target-accuracy')
