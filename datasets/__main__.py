"""python -m sizeshape_datasets make|pack|describe ...: make, pack and inspect datasets."""
import argparse
import json
import os
import statistics
import sys

from sizeshape_datasets import hdf5, mame, synthetic


def make(args):
    synthetic.generate(args.out, images_per_class=args.images_per_class,
                       val_per_class=args.val_per_class, num_classes=args.classes,
                       scale=args.scale, min_side=args.min_side,
                       max_pixels=args.max_pixels, seed=args.seed)
    describe(argparse.Namespace(root=args.out, subset='train'))


def pack(args):
    counts = hdf5.pack(args.root, args.out, args.subsets.split(',') if args.subsets else None)
    print(json.dumps({'out': args.out, 'images': counts, 'bytes': os.path.getsize(args.out)}))


def describe(args):
    images, names = hdf5.read_dataset(args.root, args.subset)
    pixels = [i.pixels for i in images]
    print(json.dumps({
        'root': args.root, 'subset': args.subset, 'images': len(images),
        'classes': len(names), 'distinct_shapes': len({(i.width, i.height) for i in images}),
        'median_pixels': statistics.median(pixels), 'max_pixels': max(pixels),
        'min_aspect': min(i.width / i.height for i in images),
        'max_aspect': max(i.width / i.height for i in images),
    }))


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m sizeshape_datasets')
    sub = parser.add_subparsers(dest='command', required=True)
    p = sub.add_parser('make', help='write a synthetic MAMe-like dataset')
    p.add_argument('--out', required=True, help='directory to create (must not exist)')
    p.add_argument('--images-per-class', type=int, default=2)
    p.add_argument('--val-per-class', type=int, default=1)
    p.add_argument('--classes', type=int, default=len(synthetic.MEDIUMS))
    p.add_argument('--scale', type=float, default=0.05,
                   help='linear scale applied to MAMe full-resolution shapes')
    p.add_argument('--min-side', type=int, default=32)
    p.add_argument('--max-pixels', type=int, default=1_000_000,
                   help='cap on pixels per image after scaling (0: none)')
    p.add_argument('--seed', type=int, default=0)
    p.set_defaults(func=make)
    p = sub.add_parser('pack', help='pack a MAMe-layout dataset into one HDF5 file')
    p.add_argument('root', help='dataset root in the MAMe layout')
    p.add_argument('--out', required=True, help='HDF5 file to create (must not exist)')
    p.add_argument('--subsets', help='comma-separated subsets (default: every subset listed)')
    p.set_defaults(func=pack)
    p = sub.add_parser('describe', help='print a JSON summary of a MAMe-layout dataset '
                                        'or a packed HDF5 file')
    p.add_argument('root')
    p.add_argument('--subset', default='train', choices=mame.SUBSETS)
    p.set_defaults(func=describe)
    args = parser.parse_args(argv)
    try:
        args.func(args)
    except (mame.DatasetError, ValueError, OSError) as err:
        print(f'error: {err}', file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
