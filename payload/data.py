"""tf.data input pipelines for the two variants.

Both read the same JPEG bytes, from the files of a MAMe-layout directory or
from a packed HDF5 file (datasets/hdf5.py); either way they are decoded by
tf.io.decode_jpeg in parallel, so both sources give identical training input.
Each element is (images, labels, true_hw): true_hw holds each image's real
height and width so that padded pixels are never counted as work.
"""
import numpy as np
import tensorflow as tf

from payload import shapes
from sizeshape_datasets import hdf5

AUTOTUNE = tf.data.AUTOTUNE


def _reader(records):
    """(one key per record, key -> encoded JPEG bytes as a scalar tf.string)."""
    if isinstance(records[0], hdf5.HDF5Record):
        path, subset = records[0].file, records[0].subset

        def read_bytes(index):
            return np.array(hdf5.Reader.read(path, subset, int(index)), dtype=object)

        def read(index):
            data = tf.numpy_function(read_bytes, [index], tf.string, stateful=False)
            return tf.ensure_shape(data, [])
        return [r.index for r in records], read
    return [r.path for r in records], tf.io.read_file


def _source(records, seed, *columns):
    """(decode(key) -> float32 image, dataset of (key, label, *columns)), shuffled."""
    keys, read = _reader(records)
    labels = [r.label for r in records]

    def decode(key):
        return tf.cast(tf.io.decode_jpeg(read(key), channels=3), tf.float32)

    ds = tf.data.Dataset.from_tensor_slices((keys, labels) + tuple(columns))
    # A new order every epoch, the same orders on every run with the same seed.
    return decode, ds.shuffle(len(records), seed=seed, reshuffle_each_iteration=True)


def lrfs_dataset(records, image_size, crop_size, batch_size, seed):
    """Fixed shape: resize to image_size x image_size, random crop, random flip.

    The crop and flip are stateless random ops seeded per element from a seeded
    stream, so that they do not depend on which parallel call ran first: the same
    seed gives the same training input on every run, from files or from HDF5.
    """
    decode, ds = _source(records, seed)
    ds = tf.data.Dataset.zip(ds, tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True))

    def load(element, random):
        key, label = element
        image = tf.image.resize(decode(key), [image_size, image_size])
        image = tf.image.stateless_random_crop(image, [crop_size, crop_size, 3],
                                               seed=tf.stack([random, 1]))
        image = tf.image.stateless_random_flip_left_right(image, seed=tf.stack([random, 2]))
        return image / 255.0, label, tf.constant([crop_size, crop_size])

    ds = ds.map(load, num_parallel_calls=AUTOTUNE)
    return ds.batch(batch_size).prefetch(AUTOTUNE)


def hrvs_targets(records, pixel_budget):
    """Per image (height, width) after the pixel budget, in record order."""
    return [shapes.budget_shape(r.width, r.height, pixel_budget) for r in records]


def hrvs_dataset(records, pixel_budget, batching, batch_size, seed):
    """Variable shape: aspect ratio kept, never resized to a common shape."""
    targets = hrvs_targets(records, pixel_budget)
    heights = [h for h, _ in targets]
    widths = [w for _, w in targets]
    buckets = [shapes.bucket_shape(h, w) for h, w in targets]
    bucket_ids = {b: i for i, b in enumerate(sorted(set(buckets)))}
    decode, ds = _source(records, seed, heights, widths,
                         [b[0] for b in buckets], [b[1] for b in buckets],
                         [bucket_ids[b] for b in buckets])

    def load(key, label, height, width, bucket_h, bucket_w, bucket_id):
        image = decode(key)
        native = tf.shape(image)[:2]
        image = tf.cond(tf.reduce_all(native == tf.stack([height, width])),
                        lambda: image,
                        lambda: tf.image.resize(image, [height, width], antialias=True))
        image = image / 255.0
        if batching == 'bucketed':
            image = tf.image.pad_to_bounding_box(image, 0, 0, bucket_h, bucket_w)
        return image, label, tf.stack([height, width]), bucket_id

    ds = ds.map(load, num_parallel_calls=AUTOTUNE)
    if batching == 'single':
        ds = ds.batch(1)
    elif batching == 'padded':
        ds = ds.padded_batch(batch_size)
    elif batching == 'bucketed':
        ds = ds.group_by_window(key_func=lambda *e: tf.cast(e[-1], tf.int64),
                                reduce_func=lambda _, window: window.batch(batch_size),
                                window_size=batch_size)
    else:
        raise ValueError(f'unknown HR&VS batching {batching!r}')
    return ds.map(lambda image, label, hw, _: (image, label, hw)).prefetch(AUTOTUNE)


def batch_shapes(records, variant, batch_size, image_size=None, crop_size=None,
                 pixel_budget=None, batching='single'):
    """(record, largest batch shape it can be part of) for the memory check."""
    if variant == 'lrfs':
        return [(r, (batch_size, crop_size, crop_size)) for r in records]
    out = []
    for record, (h, w) in zip(records, hrvs_targets(records, pixel_budget)):
        if batching == 'bucketed':
            h, w = shapes.bucket_shape(h, w)
        out.append((record, (batch_size, h, w)))
    return out


def in_memory(dataset):
    """One epoch of ``dataset``'s batches, read now and replayed from memory every epoch.

    The baseline that isolates the input pipeline's cost: the same batch shapes,
    labels and pixel values (the first epoch's order and augmentation), with no
    reading or decoding left. Runs of equal-shaped batches are stacked into one
    tensor each.
    """
    runs = []
    for batch in dataset:
        batch = tuple(batch)
        if runs and all(a.shape == b.shape for a, b in zip(runs[-1][-1], batch)):
            runs[-1].append(batch)
        else:
            runs.append([batch])
    if not runs:
        raise ValueError('the input pipeline produced no batches')
    out = None
    for run in runs:
        part = tf.data.Dataset.from_tensor_slices(
            tuple(tf.stack([batch[i] for batch in run]) for i in range(len(run[0]))))
        out = part if out is None else out.concatenate(part)
    return out.prefetch(AUTOTUNE)
