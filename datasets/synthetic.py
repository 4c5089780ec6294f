"""A synthetic MAMe-like dataset: real JPEG files in the MAMe layout.

Shapes are drawn from the real MAMe distribution and scaled down by a linear
factor so that a laptop run stays small; content depends on the class (hue,
stripe orientation and frequency) so that the loss really falls in a few
epochs. Everything is deterministic from the seed.
"""
import csv
import os
import shutil
import tempfile

import numpy as np
from PIL import Image

from sizeshape_datasets import mame, mame_shapes

# The 29 MAMe mediums (class names of MAMe_labels.csv), in label order.
MEDIUMS = [
    'Albumen photograph', 'Bronze', 'Ceramic', 'Clay', 'Engraving', 'Etching', 'Faience',
    'Glass', 'Gold', 'Graphite', 'Hand-colored engraving', 'Hand-colored etching', 'Iron',
    'Ivory', 'Limestone', 'Lithograph', 'Marble', 'Oil on canvas', 'Pen and brown ink',
    'Polychromed wood', 'Porcelain', 'Silk and metal thread', 'Silver', 'Steel', 'Wood',
    'Wood engraving', 'Woodblock', 'Woodcut', 'Woven fabric',
]


def scaled_shape(width, height, scale, min_side, max_pixels):
    """Scale a full-resolution shape down, keeping the aspect ratio where bounds allow."""
    factor = scale
    if max_pixels and width * height * factor ** 2 > max_pixels:
        factor = (max_pixels / (width * height)) ** 0.5
    return (max(min_side, int(round(width * factor))),
            max(min_side, int(round(height * factor))))


def class_image(label, width, height, rng, num_classes):
    """An RGB uint8 image whose hue and stripes identify the class."""
    hue = label / num_classes
    base = 255 * (0.5 + 0.4 * np.cos(2 * np.pi * (hue + np.array([0, 1 / 3, 2 / 3]))))
    angle = np.pi * (label % 7) / 7
    cycles = 3 + (label % 5) * 2            # stripes across the image, independent of size
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    phase = rng.random() * 2 * np.pi
    along = (x / width) * np.cos(angle) + (y / height) * np.sin(angle)
    stripes = np.sin(2 * np.pi * cycles * along + phase)[..., None]
    img = base * (0.75 + 0.25 * stripes) * rng.uniform(0.8, 1.2)
    img += rng.normal(0, 12, size=(height, width, 3))
    return np.clip(img, 0, 255).astype(np.uint8)


def generate(out_dir, images_per_class=2, val_per_class=1, num_classes=29, scale=0.05,
             min_side=32, max_pixels=1_000_000, seed=0, quality=90):
    """Write a MAMe-layout dataset to ``out_dir``, which must not exist yet.

    The files are written to a temporary sibling and renamed into place, so an
    interrupted run never leaves a half-made dataset that looks complete.
    """
    if not 1 <= num_classes <= len(MEDIUMS):
        raise ValueError(f'num_classes must be 1..{len(MEDIUMS)}')
    if images_per_class < 1 or val_per_class < 0:
        raise ValueError('images_per_class must be >= 1 and val_per_class >= 0')
    if not scale > 0:
        raise ValueError('scale must be > 0')
    if os.path.exists(out_dir):
        raise FileExistsError(f'{out_dir!r} already exists; refusing to overwrite it')
    parent = os.path.dirname(os.path.abspath(out_dir))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix='.partial-', dir=parent)
    try:
        _write(tmp, images_per_class, val_per_class, num_classes, scale, min_side,
               max_pixels, seed, quality)
        os.rename(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir


def _write(root, images_per_class, val_per_class, num_classes, scale, min_side,
           max_pixels, seed, quality):
    rng = np.random.default_rng(seed)
    histogram = mame_shapes.load_histogram()
    os.makedirs(os.path.join(root, mame.IMAGE_DIR))
    with open(os.path.join(root, mame.LABELS_FILE), 'w', newline='') as f:
        csv.writer(f).writerows(enumerate(MEDIUMS[:num_classes]))
    with open(os.path.join(root, mame.METADATA_FILE), 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(mame.COLUMNS)
        image_id = 0
        for subset, per_class in (('train', images_per_class), ('val', val_per_class)):
            for label in range(num_classes):
                for full_w, full_h in mame_shapes.sample_shapes(per_class, rng, histogram):
                    width, height = scaled_shape(full_w, full_h, scale, min_side, max_pixels)
                    name = f'{image_id}.jpg'
                    Image.fromarray(class_image(label, width, height, rng, num_classes)).save(
                        os.path.join(root, mame.IMAGE_DIR, name), quality=quality)
                    writer.writerow([name, MEDIUMS[label], 'Synthetic', f'syn-{image_id}',
                                     subset, f'{width}.0', f'{height}.0',
                                     f'{width * height}.0', f'{width / height:.4f}'])
                    image_id += 1
