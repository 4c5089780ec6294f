"""A synthetic MAMe-like dataset: real JPEG files in the MAMe layout, with MAMe's quirks.

- Shapes are drawn from the real MAMe distribution (mame_shapes.py) and scaled by a
  linear factor: ``scale=1`` gives MAMe's own sizes (median 8 Mpx, largest 373 Mpx),
  optionally capped at ``max_mpx`` megapixels; the default run uses a small scale.
- Content is photo-like: the class's hue and stripes (so that the loss falls in a
  few epochs) under a 1/f texture and sensor-like grain, so that JPEG sizes
  (about 0.4 bytes per pixel at quality 90) and decoding costs are those of
  photographs rather than of flat synthetic patterns.
- The metadata reproduces the published file's quirks: the medium strings as
  published (``'Woven fabric '`` with its trailing space); the three museums in
  their shares, the Cleveland Museum's images named by accession number with
  dots and ending in ``.jpeg`` (``1949.565.5.jpeg``), the others ``<id>.jpg``;
  instance IDs with commas (``"1984.433.193a, b"``, quoted); and a few
  progressive, grayscale and CMYK JPEGs.

Everything is deterministic from the seed.
"""
import csv
import math
import os

import numpy as np
from PIL import Image

from ssb_common import atomic
from sizeshape_datasets import mame, mame_shapes

# The 29 MAMe mediums (class names of MAMe_labels.csv), in label order.
MEDIUMS = [
    'Albumen photograph', 'Bronze', 'Ceramic', 'Clay', 'Engraving', 'Etching', 'Faience',
    'Glass', 'Gold', 'Graphite', 'Hand-colored engraving', 'Hand-colored etching', 'Iron',
    'Ivory', 'Limestone', 'Lithograph', 'Marble', 'Oil on canvas', 'Pen and brown ink',
    'Polychromed wood', 'Porcelain', 'Silk and metal thread', 'Silver', 'Steel', 'Wood',
    'Wood engraving', 'Woodblock', 'Woodcut', 'Woven fabric',
]
# How the published MAMe_dataset.csv spells a medium where it differs from MAMe_labels.csv.
PUBLISHED_MEDIUM = {'Woven fabric': 'Woven fabric '}
# Images per museum in the published MAMe_dataset.csv; exactly the Cleveland
# Museum's 6,965 file names end in .jpeg.
MUSEUMS = {'Metropolitan Museum of Art': 24911, 'The Cleveland Museum of Art': 6965,
           'Los Angeles County Museum of Art': 5531}
DOTTED_JPEG_MUSEUM = 'The Cleveland Museum of Art'
# One Met instance ID in N lists several parts, with a comma ("1990.38.22a,b").
COMMA_ID_EVERY = 5
# Encodings that decoders must handle, one image in every N (by image id). The
# metadata does not say how many real files use them; these make every default run
# meet each of them.
EVERY_NTH = {'progressive': 7, 'grayscale': 17, 'cmyk': 23}
TEXTURE_AMPLITUDE = 0.25     # of the class colour
GRAIN_SIGMA = 12             # grey levels
ROWS_PER_BLOCK = 1024        # bounds the float working set of very large images


def scaled_shape(width, height, scale, min_side, max_mpx=None):
    """Scale a full-resolution shape, keeping the aspect ratio where bounds allow."""
    factor = scale
    if max_mpx and width * height * factor ** 2 > max_mpx * 1e6:
        factor = (max_mpx * 1e6 / (width * height)) ** 0.5
    return (max(min_side, int(round(width * factor))),
            max(min_side, int(round(height * factor))))


def texture(width, height, rng):
    """A 1/f (pink) luminance texture of unit variance: octaves of white noise, each
    upsampled bilinearly, with amplitude growing with the octave's scale."""
    out = np.zeros((height, width), np.float32)
    total = 0.0
    step = 1
    while step < max(width, height) / 2:
        noise = rng.standard_normal((max(2, -(-height // step)), max(2, -(-width // step))))
        layer = Image.fromarray(noise.astype(np.float32), mode='F')
        out += np.sqrt(step) * np.asarray(layer.resize((width, height), Image.BILINEAR))
        total += step
        step *= 2
    out /= np.sqrt(total)
    return out


def class_image(label, width, height, rng, num_classes):
    """An RGB uint8 image whose hue and stripes identify the class, under photo-like texture."""
    hue = label / num_classes
    base = (255 * (0.5 + 0.4 * np.cos(2 * np.pi * (hue + np.array([0, 1 / 3, 2 / 3]))))
            * rng.uniform(0.8, 1.2)).astype(np.float32)
    angle = np.pi * (label % 7) / 7
    cycles = 3 + (label % 5) * 2            # stripes across the image, independent of size
    phase = rng.random() * 2 * np.pi
    along_x = (np.arange(width, dtype=np.float32) / width * np.cos(angle))[None, :]
    shade = texture(width, height, rng)
    out = np.empty((height, width, 3), np.uint8)
    for top in range(0, height, ROWS_PER_BLOCK):
        rows = slice(top, min(height, top + ROWS_PER_BLOCK))
        y = np.arange(rows.start, rows.stop, dtype=np.float32)[:, None] / height
        stripes = np.sin(2 * np.pi * cycles * (along_x + y * np.sin(angle)) + phase)
        light = 0.75 + 0.2 * stripes + TEXTURE_AMPLITUDE * 0.6 * shade[rows]
        block = base * light[..., None]
        block += rng.normal(0, GRAIN_SIGMA, block.shape[:2])[..., None].astype(np.float32)
        out[rows] = np.clip(block, 0, 255)
    return out


def provenance(image_id, rng):
    """(museum, image file name, museum-based instance ID) in the published forms."""
    names = list(MUSEUMS)
    weights = [MUSEUMS[n] for n in names]
    museum = names[rng.choice(len(names), p=[w / sum(weights) for w in weights])]
    accession = f'{1900 + image_id % 120}.{image_id}'
    if museum == DOTTED_JPEG_MUSEUM:
        return museum, f'{accession}.jpeg', accession
    if image_id % COMMA_ID_EVERY == COMMA_ID_EVERY - 1:
        accession += 'a, b'
    return museum, f'{image_id}.jpg', accession


def save_jpeg(pixels, path, image_id, quality):
    """Write ``pixels`` as a JPEG, in the encoding this image id gets (EVERY_NTH)."""
    image, options = Image.fromarray(pixels), {'quality': quality}
    if image_id % EVERY_NTH['grayscale'] == EVERY_NTH['grayscale'] - 1:
        image = image.convert('L')
    elif image_id % EVERY_NTH['cmyk'] == EVERY_NTH['cmyk'] - 1:
        image = image.convert('CMYK')
    if image_id % EVERY_NTH['progressive'] == EVERY_NTH['progressive'] - 1:
        options['progressive'] = True
    with mame.no_pixel_limit():
        image.save(path, format='JPEG', **options)


def generate(out_dir, images_per_class=2, val_per_class=1, num_classes=29, scale=0.1,
             min_side=32, max_mpx=None, seed=0, quality=90):
    """Write a MAMe-layout dataset to ``out_dir``, which must not exist yet.

    The files are written to a temporary sibling and renamed into place, so an
    interrupted run never leaves a half-made dataset that looks complete.
    """
    if not 1 <= num_classes <= len(MEDIUMS):
        raise ValueError(f'num_classes must be 1..{len(MEDIUMS)}')
    if images_per_class < 1 or val_per_class < 0:
        raise ValueError('images_per_class must be >= 1 and val_per_class >= 0')
    if not 0 < scale < math.inf:
        raise ValueError('scale must be a finite number > 0')
    if max_mpx is not None and not 0 < max_mpx < math.inf:
        raise ValueError('max_mpx must be a finite number > 0 (or None for no cap)')
    if min_side < 1:
        raise ValueError('min_side must be >= 1')
    if not 0 <= seed < 2**32:
        raise ValueError('seed must be between 0 and 2**32 - 1')
    with atomic.directory(out_dir) as tmp:
        _write(tmp, images_per_class, val_per_class, num_classes, scale, min_side,
               max_mpx, seed, quality)
    return out_dir


def _write(root, images_per_class, val_per_class, num_classes, scale, min_side,
           max_mpx, seed, quality):
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
                    width, height = scaled_shape(full_w, full_h, scale, min_side, max_mpx)
                    museum, name, instance = provenance(image_id, rng)
                    save_jpeg(class_image(label, width, height, rng, num_classes),
                              os.path.join(root, mame.IMAGE_DIR, name), image_id, quality)
                    medium = MEDIUMS[label]
                    writer.writerow([name, PUBLISHED_MEDIUM.get(medium, medium), museum,
                                     instance, subset, f'{width}.0', f'{height}.0',
                                     f'{width * height}.0', f'{width / height:.4f}'])
                    image_id += 1
