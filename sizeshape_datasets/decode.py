"""How a dataset record becomes pixels at its training resolution (TensorFlow ops).

One home for the payload's input pipeline (payload/data.py) and for ``prepare``
(prepare.py), so that prepared data holds exactly the pixels training would
compute from the JPEGs.

JPEGs are decoded with DCT scaling (libjpeg's ``ratio`` 1, 2, 4 or 8) at the
largest ratio that still leaves the image at least as large as its target:
entropy decoding dominates the cost of large JPEGs, and a 373 Mpx scan bound
for 65k pixels never has to exist at full size in memory.
"""
import math

import numpy as np
import tensorflow as tf

from sizeshape_datasets import hdf5

DCT_RATIOS = (1, 2, 4, 8)
# LR&FS squashes to a square with plain bilinear resizing, as it always has;
# HR&VS keeps the aspect ratio and antialiases, since budgets shrink images up to 1000x.
ANTIALIAS = {'lrfs': False, 'hrvs': True}


def dct_ratio_index(width, height, target_height, target_width):
    """Index into DCT_RATIOS of the largest ratio whose decoded size covers the target."""
    best = 0
    for i, ratio in enumerate(DCT_RATIOS):
        if (math.ceil(width / ratio) >= target_width
                and math.ceil(height / ratio) >= target_height):
            best = i
    return best


def decode_jpeg(data, ratio_index):
    """uint8 HxWx3 image of the JPEG bytes ``data``, DCT-scaled by DCT_RATIOS[ratio_index]."""
    return tf.switch_case(tf.cast(ratio_index, tf.int32), [
        (lambda r=r: tf.io.decode_jpeg(data, channels=3, ratio=r)) for r in DCT_RATIOS])


def decode_raw(data, height, width):
    """uint8 HxWx3 image of prepared (already decoded) pixel bytes."""
    return tf.reshape(tf.io.decode_raw(data, tf.uint8), tf.stack([height, width, 3]))


def resize(image, height, width, antialias):
    """float32 image (0..255) of exactly ``height`` x ``width``; unchanged if already so."""
    image = tf.cast(image, tf.float32)
    same = tf.reduce_all(tf.shape(image)[:2] == tf.stack([height, width]))
    return tf.cond(same, lambda: image,
                   lambda: tf.image.resize(image, tf.stack([height, width]), antialias=antialias))


def reader(records):
    """(one key per record, key -> stored bytes as a scalar tf.string)."""
    if isinstance(records[0], hdf5.HDF5Record):
        path, subset, column = records[0].file, records[0].subset, records[0].column

        def read_bytes(index):
            return np.array(hdf5.Reader.read(path, subset, int(index), column), dtype=object)

        def read(index):
            data = tf.numpy_function(read_bytes, [index], tf.string, stateful=False)
            return tf.ensure_shape(data, [])
        return [r.index for r in records], read
    return [r.path for r in records], tf.io.read_file


def images(records, targets, antialias, *columns):
    """(dataset of per-image columns in record order, load).

    ``load(*element)`` reads and decodes one element's image and returns (float32
    image of its target shape, label, *columns). Splitting the two lets a caller
    shuffle the cheap columns before any image is read.
    """
    keys, read = reader(records)
    raw = hdf5.is_prepared(records)
    ratios = [dct_ratio_index(r.width, r.height, h, w) for r, (h, w) in zip(records, targets)]
    ds = tf.data.Dataset.from_tensor_slices(
        (keys, [r.label for r in records], ratios, [r.height for r in records],
         [r.width for r in records], [h for h, _ in targets], [w for _, w in targets]) + columns)

    def load(key, label, ratio, height, width, target_h, target_w, *rest):
        data = read(key)
        image = decode_raw(data, height, width) if raw else decode_jpeg(data, ratio)
        return (resize(image, target_h, target_w, antialias), label) + tuple(rest)

    return ds, load
