#!/usr/bin/env python3
"""The plain reference the payload is measured against: the synthetic-tensor method of
ReFrame's hpctestlib and of CSCS's TensorFlow tests.

A keras.applications model, one random batch reused for every step, one tf.function
holding forward, backward and the optimizer update, warm-up steps, then timed steps.
Nothing of the payload is imported: this is what a careful user would write.

    python benchmarks/reference_step.py steady --model resnet50 --batch-size 8 --size 224
    python benchmarks/reference_step.py shapes --model resnet50 --shapes 240x270,300x216,...

``steady`` prints images/s over the timed steps and the first step's seconds (tracing
and first run); ``shapes`` runs one step on each new shape at batch 1, then each shape
again, and prints each new shape's cost (first step minus the same shape's next step).
One JSON line on stdout.
"""
import argparse
import json
import os
import statistics
import time

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

CLASSES = 29


def build(name, input_shape):
    if name == 'smallcnn':      # three strided convolutions: for smoke runs of the benchmark
        inputs = keras.Input(input_shape)
        x = inputs
        for filters in (16, 32, 64):
            x = keras.layers.Conv2D(filters, 3, strides=2, padding='same', activation='relu')(x)
        return keras.Model(inputs, keras.layers.Dense(CLASSES)(
            keras.layers.GlobalAveragePooling2D()(x)))
    application = {'resnet50': keras.applications.ResNet50,
                   'vgg16': keras.applications.VGG16}[name]
    base = application(weights=None, include_top=False, pooling='avg', input_shape=input_shape)
    return keras.Model(base.input, keras.layers.Dense(CLASSES)(base.output))


def make_step(model, optimizer_name, learning_rate):
    optimizer = (keras.optimizers.Adam(learning_rate) if optimizer_name == 'adam'
                 else keras.optimizers.SGD(learning_rate))
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(images, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss
    return step


def batch(size, height, width):
    return (tf.random.uniform((size, height, width, 3)),
            tf.random.uniform((size,), maxval=CLASSES, dtype=tf.int32))


def timed(step, images, labels):
    start = time.perf_counter()
    step(images, labels).numpy()
    return time.perf_counter() - start


def steady(args):
    shape = (args.size, args.size, 3) if args.input_shape == 'fixed' else (None, None, 3)
    step = make_step(build(args.model, shape), args.optimizer, args.learning_rate)
    images, labels = batch(args.batch_size, args.size, args.size)
    first = timed(step, images, labels)
    for _ in range(args.warmup):
        timed(step, images, labels)
    start = time.perf_counter()
    for _ in range(args.steps):
        loss = step(images, labels)
    loss.numpy()
    seconds = time.perf_counter() - start
    return {'first_step_s': first, 'images_per_s': args.batch_size * args.steps / seconds,
            'steps': args.steps, 'batch_size': args.batch_size}


def shapes(args):
    sizes = [tuple(int(x) for x in s.split('x')) for s in args.shapes.split(',')]
    step = make_step(build(args.model, (None, None, 3)), args.optimizer, args.learning_rate)
    batches = [batch(1, h, w) for h, w in sizes]
    first = [timed(step, *b) for b in batches]
    again = [timed(step, *b) for b in batches]
    costs = [f - a for f, a in zip(first, again)]
    return {'shapes': args.shapes, 'first_step_s': first, 'steady_step_s': again,
            'seconds_per_shape': statistics.mean(costs)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('mode', choices=('steady', 'shapes'))
    p.add_argument('--model', default='resnet50', choices=('resnet50', 'vgg16', 'smallcnn'))
    p.add_argument('--optimizer', default='adam', choices=('adam', 'sgd'))
    p.add_argument('--learning-rate', type=float, default=1e-3)
    p.add_argument('--batch-size', type=int, default=8)
    p.add_argument('--size', type=int, default=224)
    p.add_argument('--input-shape', default='none', choices=('none', 'fixed'),
                   help='none: model built for any input size, as the payload builds it')
    p.add_argument('--warmup', type=int, default=3)
    p.add_argument('--steps', type=int, default=12)
    p.add_argument('--shapes', help='shapes: HxW,HxW,... at batch 1')
    p.add_argument('--seed', type=int, default=0)
    args = p.parse_args()
    keras.utils.set_random_seed(args.seed)
    result = steady(args) if args.mode == 'steady' else shapes(args)
    print(json.dumps({'mode': args.mode, 'model': args.model, 'optimizer': args.optimizer,
                      'input_shape': args.input_shape, **result}))


if __name__ == '__main__':
    main()
