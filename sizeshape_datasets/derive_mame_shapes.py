"""Regenerate ``mame_shape_histogram.csv`` from the real MAMe metadata.

Usage: python -m sizeshape_datasets.derive_mame_shapes MAMe_dataset.csv

The histogram is what the synthetic generator samples image shapes from; it
is committed so that the project works without the MAMe metadata at hand.
"""
import argparse
import collections
import csv
import os
import sys

from sizeshape_datasets import mame_shapes


def derive(metadata_csv):
    cells = collections.Counter()
    with open(metadata_csv, newline='') as f:
        for row in csv.DictReader(f):
            width, height = float(row['Width']), float(row['Height'])
            cells[mame_shapes.cell_of(width, height)] += 1
    return cells


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('metadata_csv', help='MAMe_dataset.csv of the real MAMe release')
    parser.add_argument('--out', default=mame_shapes.HISTOGRAM_PATH)
    args = parser.parse_args(argv)
    cells = derive(args.metadata_csv)
    with open(args.out, 'w', newline='') as f:
        f.write('# 2-D histogram of MAMe full-resolution image shapes, derived from '
                f'{os.path.basename(args.metadata_csv)} of HPAI-BSC/MAMe-baselines '
                f'({sum(cells.values())} images) by derive_mame_shapes.py.\n'
                f'# Cell = floor(log10(pixels)/{mame_shapes.LOG10_PIXELS_STEP}), '
                f'floor(log2(width/height)/{mame_shapes.LOG2_ASPECT_STEP}).\n')
        writer = csv.writer(f)
        writer.writerow(['log10_pixels_cell', 'log2_aspect_cell', 'images'])
        for (p, a), n in sorted(cells.items()):
            writer.writerow([p, a, n])
    print(f'wrote {len(cells)} cells to {args.out}', file=sys.stderr)


if __name__ == '__main__':
    main()
