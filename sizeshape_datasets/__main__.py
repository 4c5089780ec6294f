"""python -m sizeshape_datasets make|pack|prepare|describe ...: make, pack, prepare and
inspect datasets."""
import argparse
import json
import os
import statistics
import sys

from sizeshape_datasets import hdf5, mame, synthetic
from ssb_contract import flags
from ssb_contract.options import SUBSETS


def make(args):
    synthetic.generate(args.out, images_per_class=args.images_per_class,
                       val_per_class=args.val_per_class, num_classes=args.classes,
                       scale=args.scale, min_side=args.min_side,
                       max_mpx=args.max_mpx, seed=args.seed)
    describe(argparse.Namespace(root=args.out, subset='train'))


def pack(args):
    counts = hdf5.pack(args.root, args.out, args.subsets.split(',') if args.subsets else None)
    print(json.dumps({'out': args.out, 'images': counts, 'bytes': os.path.getsize(args.out)}))


def prepare(args):
    os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
    from sizeshape_datasets import prepare as preparing   # imports TensorFlow
    if os.path.exists(args.out):
        raise FileExistsError(f'{args.out!r} already exists; refusing to overwrite it')
    subsets = (args.subsets.split(',') if args.subsets else
               hdf5.subsets_of(args.root) if os.path.isdir(args.root) else ['train'])
    parts, class_names = {}, None
    for subset in subsets:
        records, class_names = hdf5.read_dataset(args.root, subset)
        if hdf5.is_prepared(records):
            raise mame.DatasetError(f'{args.root!r} is prepared already')
        parts[subset] = records
    spec = preparing.spec(args.variant, args.image_size, args.pixel_budget.pixels, args.upscale)
    done = preparing.prepare(parts, args.out, class_names, spec, os.path.abspath(args.root),
                             hdf5.fingerprint(args.root))
    print(json.dumps({'out': args.out, 'prepared': spec, **done}))


def describe(args):
    images, names = hdf5.read_dataset(args.root, args.subset)
    pixels = [i.pixels for i in images]
    print(json.dumps({
        'root': args.root, 'subset': args.subset, 'images': len(images),
        'classes': len(names), 'distinct_shapes': len({(i.width, i.height) for i in images}),
        'median_pixels': statistics.median(pixels), 'max_pixels': max(pixels),
        'min_aspect': min(i.width / i.height for i in images),
        'max_aspect': max(i.width / i.height for i in images),
        'prepared': hdf5.prepared_for(images), 'fingerprint': hdf5.fingerprint(args.root),
    }))


def parser():
    parser = argparse.ArgumentParser(prog='python -m sizeshape_datasets')
    sub = parser.add_subparsers(dest='command', required=True)
    p = sub.add_parser('make', help='write a synthetic MAMe-like dataset')
    p.add_argument('--out', required=True, help='directory to create (must not exist)')
    p.add_argument('--images-per-class', type=int, default=2)
    p.add_argument('--val-per-class', type=int, default=1)
    p.add_argument('--classes', type=int, default=len(synthetic.MEDIUMS))
    p.add_argument('--scale', type=float, default=0.1,
                   help='linear scale applied to MAMe full-resolution shapes (1: real size)')
    p.add_argument('--min-side', type=int, default=32)
    p.add_argument('--max-mpx', type=float,
                   help='cap on megapixels per image after scaling (default: none)')
    p.add_argument('--seed', type=int, default=0)
    p.set_defaults(func=make)
    p = sub.add_parser('pack', help='pack a MAMe-layout dataset into one HDF5 file')
    p.add_argument('root', help='dataset root in the MAMe layout')
    p.add_argument('--out', required=True, help='HDF5 file to create (must not exist)')
    p.add_argument('--subsets', help='comma-separated subsets (default: every subset listed)')
    p.set_defaults(func=pack)
    p = sub.add_parser('prepare', help='decode and resize a dataset once to its training '
                                       'resolution, into one HDF5 file the payload trains from')
    p.add_argument('root', help='dataset root in the MAMe layout, or a packed HDF5 file')
    p.add_argument('--out', required=True, help='HDF5 file to create (must not exist)')
    # The payload's own options: a file prepared as a run would be.
    flags.add_arguments(p, ('variant', 'pixel_budget', 'upscale', 'image_size'))
    p.add_argument('--subsets', help='comma-separated subsets (default: every subset listed)')
    p.set_defaults(func=prepare)
    p = sub.add_parser('describe', help='print a JSON summary of a MAMe-layout dataset '
                                        'or a packed HDF5 file')
    p.add_argument('root')
    p.add_argument('--subset', default='train', choices=SUBSETS)
    p.set_defaults(func=describe)
    return parser


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        args.func(args)
    except (mame.DatasetError, ValueError, OSError) as err:
        print(f'error: {err}', file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
