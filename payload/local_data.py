"""Before training, each timed on its own and never inside an epoch: staging a worker's
images to node-local storage (``--stage-dir``), and preparing them once at training
resolution (``--prepare``). Both work on copies that are removed when the run ends."""
import contextlib
import os
import shutil

from payload import PayloadError
from sizeshape_datasets import hdf5, mame, prepare, stage


def spec(batches):
    """The resolution ``batches`` (payload/settings.py) train at, as a prepared file records
    it."""
    return prepare.spec(batches.variant, batches.image_size, batches.budget, batches.upscale)


def check_prepared(records, batches, data_dir):
    """A prepared file trains only at the resolution it was prepared for."""
    found = hdf5.prepared_for(records)
    if found is not None and found != spec(batches):
        def text(settings):
            return ', '.join(f'{k}={v}' for k, v in sorted(settings.items()))
        raise PayloadError(f'{data_dir!r} was prepared for {text(found)}; this run asks '
                           f'for {text(spec(batches))}: prepare it again, or change the options')


@contextlib.contextmanager
def ready(data, batches, records, class_names, worker):
    """Yield (records to train from, summary fields) with staging and preparation done, as
    ``data`` asks, at the resolution of ``batches`` (payload/settings.py)."""
    info = {'stage_dir': data.stage_dir or None, 'stage_s': None, 'stage_bytes': None,
            'stage_gb_per_s': None, 'prepare_s': None, 'prepare_images_per_s': None,
            'prepare_bytes': None}
    made = []
    try:
        try:
            if data.stage_dir:
                records, staged = stage.stage(records, data.stage_dir)
                made.append(staged['dir'])
                info.update(stage_s=staged['seconds'], stage_bytes=staged['bytes'],
                            stage_gb_per_s=staged['gb_per_s'])
            if data.prepare:
                if hdf5.is_prepared(records):
                    raise PayloadError(f'{data.data_dir!r} is prepared already: drop --prepare')
                work = stage.private_dir(made[0] if made else '.', 'ssb-prepared-')
                made.append(work)
                out = os.path.join(work, f'prepared-worker{worker}.h5')
                done = prepare.prepare({data.subset: records}, out, class_names, spec(batches),
                                       os.path.abspath(data.data_dir),
                                       hdf5.fingerprint(data.data_dir))
                records, _ = hdf5.read_hdf5(out, data.subset)
                info.update(prepare_s=done['seconds'], prepare_images_per_s=done['images_per_s'],
                            prepare_bytes=done['bytes'])
        except mame.DatasetError as err:
            raise PayloadError(str(err)) from None
        yield records, info
    finally:
        for path in reversed(made):
            shutil.rmtree(path, ignore_errors=True)
