"""Decode and resize once: a dataset stored at its training resolution.

At real resolution an HR&VS epoch costs more JPEG decoding than training (a
9 Mpx MAMe image decodes at about 13-25 images/s per core): on a GPU node the
training throughput would be the CPUs' decoding rate. A prepared file holds
each image as the payload's input pipeline would make it (sizeshape_datasets/decode.py:
DCT-scaled decoding, then resizing to the pixel budget or the LR&FS square),
as raw uint8 pixels in the packed HDF5 format (hdf5.py), so that training reads
pixels and decodes nothing.

    python -m sizeshape_datasets prepare SRC --variant hrvs --pixel-budget 65k --out X.h5

A prepared file is made for one resolution, recorded in its ``prepared``
attribute (``spec``); the payload refuses to train from it at another.
"""
import dataclasses
import os
import time

import numpy as np
import tensorflow as tf

from ssb_common import atomic
from sizeshape_datasets import decode, hdf5, shapes


def spec(variant, image_size=None, pixel_budget=None, upscale=True):
    """What a prepared file is prepared for: the resolution settings of one variant."""
    if variant == 'lrfs':
        return {'variant': 'lrfs', 'image_size': image_size}
    return {'variant': 'hrvs', 'pixel_budget': pixel_budget, 'upscale': upscale}


def targets(records, prepared):
    """(height, width) of each record at the resolution ``prepared`` (a spec) describes."""
    if prepared['variant'] == 'lrfs':
        return [(prepared['image_size'], prepared['image_size'])] * len(records)
    return [shapes.budget_shape(r.width, r.height, prepared['pixel_budget'], prepared['upscale'])
            for r in records]


def prepare(parts, out, class_names, prepared, source, source_fingerprint=None):
    """Write the prepared file ``out`` (must not exist) from {subset: records}.

    Returns {'images', 'seconds', 'images_per_s', 'bytes'}: the
    time covers reading, decoding, resizing and writing, the whole preparation.
    """
    h5py = hdf5.h5py_module()
    start = time.perf_counter()
    images = 0
    with atomic.file(out, suffix='.h5') as tmp, h5py.File(tmp, 'w') as f:
        for subset, records in parts.items():
            shaped = targets(records, prepared)
            ds, load = decode.images(records, shaped, decode.ANTIALIAS[prepared['variant']])
            ds = ds.map(lambda *e, load=load: tf.cast(
                            tf.clip_by_value(tf.round(load(*e)[0]), 0, 255), tf.uint8),
                        num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
            group = f.create_group(subset)
            pixels = group.create_dataset(hdf5.PREPARED, (len(records),),
                                          dtype=h5py.vlen_dtype(np.uint8))
            for i, image in enumerate(ds.prefetch(tf.data.AUTOTUNE)):
                pixels[i] = image.numpy().reshape(-1)
            hdf5.write_columns(group, [dataclasses.replace(r, height=h, width=w)
                                       for r, (h, w) in zip(records, shaped)],
                               [os.path.basename(r.path) for r in records])
            images += len(records)
        hdf5.write_attributes(f, class_names, source,
                              hdf5.derived_fingerprint(source_fingerprint, prepared), prepared)
    seconds = time.perf_counter() - start
    return {'images': images, 'seconds': seconds, 'images_per_s': images / seconds,
            'bytes': os.path.getsize(out)}
