"""The MAMe image-shape distribution, as a committed 2-D histogram.

Shapes are sampled cell by cell (weighted by image count), then uniformly in
log space within the cell, which reproduces the pixel-count and aspect-ratio
spread of MAMe (median 2667x2900 px, aspect ratio 0.112 to 15).
"""
import csv
import math
import os

import numpy as np

HISTOGRAM_PATH = os.path.join(os.path.dirname(__file__), 'mame_shape_histogram.csv')
LOG10_PIXELS_STEP = 0.1
LOG2_ASPECT_STEP = 0.25


def cell_of(width, height):
    return (math.floor(math.log10(width * height) / LOG10_PIXELS_STEP),
            math.floor(math.log2(width / height) / LOG2_ASPECT_STEP))


def load_histogram(path=HISTOGRAM_PATH):
    """Return (cells as an int array of shape (n, 2), image counts)."""
    with open(path, newline='') as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith('#')))
    cells = np.array([[int(r['log10_pixels_cell']), int(r['log2_aspect_cell'])]
                      for r in rows])
    counts = np.array([int(r['images']) for r in rows])
    return cells, counts


def sample_shapes(n, rng, histogram=None):
    """Draw ``n`` full-resolution (width, height) pairs from the MAMe distribution."""
    cells, counts = histogram if histogram is not None else load_histogram()
    picked = cells[rng.choice(len(cells), size=n, p=counts / counts.sum())]
    log10_pixels = (picked[:, 0] + rng.random(n)) * LOG10_PIXELS_STEP
    log2_aspect = (picked[:, 1] + rng.random(n)) * LOG2_ASPECT_STEP
    pixels, aspect = 10.0 ** log10_pixels, 2.0 ** log2_aspect
    widths = np.sqrt(pixels * aspect)
    heights = np.sqrt(pixels / aspect)
    return [(int(round(w)), int(round(h))) for w, h in zip(widths, heights)]
