"""tf.data input pipelines for the two variants.

Both read the same bytes, from the files of a MAMe-layout directory or from a
packed HDF5 file (sizeshape_datasets/hdf5.py); either way they are decoded in parallel
by the same TensorFlow ops (sizeshape_datasets/decode.py), so both sources give
identical training input. Prepared data (``sizeshape_datasets prepare``) holds
pixels already at training resolution and skips decoding and resizing.
Each element is (images, labels, true_hw): true_hw holds each image's real
height and width so that padded pixels are never counted as work.
"""
import time

import tensorflow as tf

from sizeshape_datasets import decode, hdf5, shapes

AUTOTUNE = tf.data.AUTOTUNE


def _images(records, targets, seed, antialias, *columns):
    """decode.images, shuffled by key before any image is read: a new order every
    epoch, the same orders on every run with the same seed."""
    ds, load = decode.images(records, targets, antialias, *columns)
    return ds.shuffle(len(records), seed=seed, reshuffle_each_iteration=True), load


def lrfs_dataset(records, image_size, crop_size, batch_size, seed):
    """Fixed shape: resize to image_size x image_size, random crop, random flip.

    Batches are all full (the remainder is dropped), so that LR&FS trains on one
    input shape. The crop and flip are stateless random ops seeded per element
    from a seeded stream, so that they do not depend on which parallel call ran
    first: the same seed gives the same training input on every run, from files
    or from HDF5.
    """
    ds, load = _images(records, [(image_size, image_size)] * len(records), seed,
                       decode.ANTIALIAS['lrfs'])
    ds = tf.data.Dataset.zip(ds, tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True))

    def augment(element, random):
        image, label = load(*element)
        image = tf.image.stateless_random_crop(image, [crop_size, crop_size, 3],
                                               seed=tf.stack([random, 1]))
        image = tf.image.stateless_random_flip_left_right(image, seed=tf.stack([random, 2]))
        return image / 255.0, label, tf.constant([crop_size, crop_size])

    ds = ds.map(augment, num_parallel_calls=AUTOTUNE)
    return ds.batch(batch_size, drop_remainder=True).prefetch(AUTOTUNE)


def hrvs_targets(records, budget, upscale=True):
    """Per image (height, width) after the budget (pixels; None: native), in record order.

    Prepared records are already at their training shape."""
    if hdf5.is_prepared(records):
        return [(r.height, r.width) for r in records]
    return [shapes.budget_shape(r.width, r.height, budget, upscale) for r in records]


def hrvs_dataset(records, budget, batching, batch_size, seed, upscale=True):
    """Variable shape: aspect ratio kept, never resized to a common shape."""
    targets = hrvs_targets(records, budget, upscale)
    buckets = [shapes.bucket_shape(h, w) for h, w in targets]
    bucket_ids = {b: i for i, b in enumerate(sorted(set(buckets)))}
    ds, load = _images(records, targets, seed, decode.ANTIALIAS['hrvs'], targets, buckets,
                       [bucket_ids[b] for b in buckets])

    def prepare(*element):
        image, label, true_hw, bucket_hw, bucket_id = load(*element)
        image = image / 255.0
        if batching == 'bucketed':
            image = tf.image.pad_to_bounding_box(image, 0, 0, bucket_hw[0], bucket_hw[1])
        return image, label, true_hw, bucket_id

    ds = ds.map(prepare, num_parallel_calls=AUTOTUNE)
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


def eval_dataset(records, batches):
    """Validation input, the same every epoch: LR&FS resized and centre-cropped, HR&VS
    at its training shape (``batches``: payload/settings.py); no shuffling or augmentation,
    and every image (the last batch may be partial: evaluation traces its shape once)."""
    b = batches
    if b.variant == 'lrfs':
        targets = [(b.image_size, b.image_size)] * len(records)
        offset = (b.image_size - b.crop_size) // 2
    else:
        targets = hrvs_targets(records, b.budget, b.upscale)
    ds, load = decode.images(records, targets, decode.ANTIALIAS[b.variant])

    def prepare(*element):
        image, label = load(*element)
        if b.variant == 'lrfs':
            image = tf.image.crop_to_bounding_box(image, offset, offset, b.crop_size,
                                                  b.crop_size)
        return image / 255.0, label

    ds = ds.map(prepare, num_parallel_calls=AUTOTUNE)
    single = b.variant == 'hrvs' and b.hrvs_batching == 'single'
    ds = ds.batch(1) if single else ds.padded_batch(b.batch_size)
    return ds.prefetch(AUTOTUNE)


def with_threads(dataset, threads):
    """``dataset`` with a private pool of ``threads`` threads for its parallel work; 0:
    unchanged (tf.data's default pool, shared with the training ops)."""
    if not threads:
        return dataset
    options = tf.data.Options()
    options.threading.private_threadpool_size = threads
    return dataset.with_options(options)


def input_capacity(dataset, max_batches, max_seconds):
    """(images, seconds) of draining ``dataset`` alone, no training: at most
    ``max_batches`` batches or about ``max_seconds``, whichever comes first."""
    images, start = 0, time.perf_counter()
    for n, (batch, *_) in enumerate(dataset, 1):
        images += int(batch.shape[0])
        if n >= max_batches or time.perf_counter() - start >= max_seconds:
            break
    return images, time.perf_counter() - start


def batch_shapes(records, batches):
    """(record, largest batch shape it can be part of) for the memory check."""
    b = batches
    if b.variant == 'lrfs':
        return [(r, (b.batch_size, b.crop_size, b.crop_size)) for r in records]
    out = []
    for record, (h, w) in zip(records, hrvs_targets(records, b.budget, b.upscale)):
        if b.hrvs_batching == 'bucketed':
            h, w = shapes.bucket_shape(h, w)
        out.append((record, (b.batch_size, h, w)))
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
    # No autotuning: nothing here to tune, and its model thread made releasing the
    # iterator wait up to 37 s at the run's end in 5 of 10 runs (0 of 6 without it).
    options = tf.data.Options()
    options.autotune.enabled = False
    return out.prefetch(2).with_options(options)
