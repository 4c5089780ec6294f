"""Training FLOPs per input shape, counted from the model's own Keras layers, and a peak.

Convention (the usual one for "model FLOPs" and MFU):

- a multiply-add is 2 FLOPs; only the layers with a ``kernel`` that multiply it
  with their input count: Conv1D/2D/3D (also grouped), DepthwiseConv2D and Dense:
  ``2 * kernel elements * output positions`` per image, where output positions are
  the output's spatial size (1 for a Dense on a vector). For a Conv2D this is
  ``2 * kh * kw * (cin / groups) * cout * Hout * Wout``;
- biases, batch normalisation, activations, pooling, additions, the loss and the
  optimizer update are not counted (together under 1% of ResNet-50's count);
- training is 3x the forward count: the backward pass computes the gradient with
  respect to each such layer's input and to its kernel, each as costly as the
  forward product (the first layer's input gradient, which is not needed, is
  counted too).

Shapes are propagated through the layers with ``compute_output_shape``, in pure
Python (milliseconds for ResNet-50), so counting never traces or runs the model.
Padded pixels are counted: they are work the device did.
"""
import math
import time

import keras

CONVENTION = ('2 FLOPs per multiply-add of Conv/Dense kernels, training = 3x forward; '
              'bias, normalisation, activation, pooling and optimizer not counted')
TRAINING_FACTOR = 3


class FlopCounter:
    """Training FLOPs per image of a functional Keras model, cached per (height, width)."""

    def __init__(self, model):
        self.model = model
        self._cache = {}
        self.seconds = 0.0           # time spent counting, reported so it is never hidden

    def forward_per_image(self, height, width):
        key = (height, width)
        if key not in self._cache:
            start = time.perf_counter()
            self._cache[key] = _forward_flops(self.model, (1, height, width,
                                                           self.model.inputs[0].shape[-1]))
            self.seconds += time.perf_counter() - start
        return self._cache[key]

    def training_per_image(self, height, width):
        return TRAINING_FACTOR * self.forward_per_image(height, width)

    def training(self, shape_counts):
        """Training FLOPs of steps given as {(batch, height, width): steps}."""
        return sum(steps * batch * self.training_per_image(height, width)
                   for (batch, height, width), steps in shape_counts.items())


def _forward_flops(model, input_shape):
    shapes = {id(model.inputs[0]): tuple(input_shape)}
    total = 0
    for layer in model.layers:
        if isinstance(layer, keras.layers.InputLayer):
            continue
        inputs = layer.input
        if isinstance(inputs, (list, tuple)):
            in_shape = [shapes[id(t)] for t in inputs]
        else:
            in_shape = shapes[id(inputs)]
        out_shape = tuple(layer.compute_output_shape(in_shape))
        shapes[id(layer.output)] = out_shape
        kernel = getattr(layer, 'kernel', None)
        if kernel is not None and isinstance(layer, (keras.layers.Dense, keras.layers.Conv1D,
                                                     keras.layers.Conv2D, keras.layers.Conv3D,
                                                     keras.layers.DepthwiseConv2D)):
            positions = math.prod(out_shape[1:-1]) if len(out_shape) > 2 else 1
            total += 2 * math.prod(kernel.shape) * positions * out_shape[0]
    return total


def measure_matmul_peak(dtype='float32', size=None, seconds=0.5):
    """GFLOP/s of square matmuls on the first accelerator (else the CPU), and a description.

    Timed in rounds that end with a host copy, so asynchronous GPUs are measured too.
    """
    import tensorflow as tf

    gpus = tf.config.list_logical_devices('GPU')
    device = gpus[0].name if gpus else '/CPU:0'
    size = size or (8192 if gpus else 2048)
    with tf.device(device):
        a = tf.random.uniform([size, size], dtype=tf.float32)
        b = tf.random.uniform([size, size], dtype=tf.float32)
        a, b = tf.cast(a, dtype), tf.cast(b, dtype)

        @tf.function
        def rounds(n):
            acc = tf.zeros([], tf.float32)
            for _ in tf.range(n):
                acc += tf.cast(tf.matmul(a, b)[0, 0], tf.float32)
            return acc

        rounds(tf.constant(2)).numpy()            # trace and warm up
        n, elapsed = 2, 0.0
        while elapsed < seconds / 5:
            n *= 2
            start = time.perf_counter()
            rounds(tf.constant(n)).numpy()
            elapsed = time.perf_counter() - start
        repeats = max(1, round(n * seconds / elapsed))
        start = time.perf_counter()
        rounds(tf.constant(repeats)).numpy()
        elapsed = time.perf_counter() - start
    gflops = 2 * size ** 3 * repeats / elapsed / 1e9
    return gflops, f'measured: {size}x{size} {dtype} matmul on {device}'
