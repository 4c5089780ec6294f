"""Before training, each timed on its own and never inside an epoch: staging a worker's
images to node-local storage (``--stage-dir``), and preparing them once at training
resolution (``--prepare``). Both work on copies that are removed when the run ends."""
import contextlib
import os
import shutil

from payload import PayloadError
from sizeshape_datasets import hdf5, mame, prepare, stage


def spec(args):
    """The resolution this run trains at, as a prepared file records it."""
    return prepare.spec(args.variant, args.image_size, args.pixel_budget_px, args.upscale)


def check_prepared(records, args):
    """A prepared file trains only at the resolution it was prepared for."""
    found = hdf5.prepared_for(records)
    if found is not None and found != spec(args):
        def text(settings):
            return ', '.join(f'{k}={v}' for k, v in sorted(settings.items()))
        raise PayloadError(f'{args.data_dir!r} was prepared for {text(found)}; this run asks '
                           f'for {text(spec(args))}: prepare it again, or change the options')


@contextlib.contextmanager
def ready(args, records, class_names, worker):
    """Yield (records to train from, summary fields) with staging and preparation done."""
    info = {'stage_dir': args.stage_dir or None, 'stage_s': None, 'stage_bytes': None,
            'stage_gb_per_s': None, 'prepare_s': None, 'prepare_images_per_s': None,
            'prepare_bytes': None}
    made = []
    try:
        try:
            if args.stage_dir:
                records, staged = stage.stage(records, args.stage_dir)
                made.append(staged['dir'])
                info.update(stage_s=staged['seconds'], stage_bytes=staged['bytes'],
                            stage_gb_per_s=staged['gb_per_s'])
            if args.prepare:
                if hdf5.is_prepared(records):
                    raise PayloadError(f'{args.data_dir!r} is prepared already: drop --prepare')
                work = stage.private_dir(made[0] if made else '.', 'ssb-prepared-')
                made.append(work)
                out = os.path.join(work, f'prepared-worker{worker}.h5')
                done = prepare.prepare({args.subset: records}, out, class_names, spec(args),
                                       os.path.abspath(args.data_dir),
                                       hdf5.fingerprint(args.data_dir))
                records, _ = hdf5.read_hdf5(out, args.subset)
                info.update(prepare_s=done['seconds'], prepare_images_per_s=done['images_per_s'],
                            prepare_bytes=done['bytes'])
        except mame.DatasetError as err:
            raise PayloadError(str(err)) from None
        yield records, info
    finally:
        for path in reversed(made):
            shutil.rmtree(path, ignore_errors=True)
