"""tf.data input pipelines for the two variants.

Both read the same JPEG files. Each element is (images, labels, true_hw):
true_hw holds each image's real height and width so that padded pixels are
never counted as work.
"""
import tensorflow as tf

from payload import shapes

AUTOTUNE = tf.data.AUTOTUNE
HRVS_BATCHING = ('single', 'padded', 'bucketed')


def _decode(path):
    return tf.cast(tf.io.decode_jpeg(tf.io.read_file(path), channels=3), tf.float32)


def _source(records, seed, *columns):
    paths = [r.path for r in records]
    labels = [r.label for r in records]
    ds = tf.data.Dataset.from_tensor_slices((paths, labels) + tuple(columns))
    # A new order every epoch, the same orders on every run with the same seed.
    return ds.shuffle(len(records), seed=seed, reshuffle_each_iteration=True)


def lrfs_dataset(records, image_size, crop_size, batch_size, seed):
    """Fixed shape: resize to image_size x image_size, random crop, random flip."""
    def load(path, label):
        image = tf.image.resize(_decode(path), [image_size, image_size])
        image = tf.image.random_crop(image, [crop_size, crop_size, 3])
        image = tf.image.random_flip_left_right(image) / 255.0
        return image, label, tf.constant([crop_size, crop_size])

    ds = _source(records, seed).map(load, num_parallel_calls=AUTOTUNE)
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
    ds = _source(records, seed, heights, widths,
                 [b[0] for b in buckets], [b[1] for b in buckets],
                 [bucket_ids[b] for b in buckets])

    def load(path, label, height, width, bucket_h, bucket_w, bucket_id):
        image = _decode(path)
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
