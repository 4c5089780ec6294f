"""Staging: copy a worker's images to node-local storage before training (MLPerf HPC rule:
the copy is timed and reported on its own, never inside an epoch)."""
import dataclasses
import os
import shutil
import time

from ssb_common import atomic
from sizeshape_datasets import hdf5, mame


def needed_bytes(records):
    """Bytes a staged copy of ``records`` takes: their files, or the one packed file."""
    if isinstance(records[0], hdf5.HDF5Record):
        return os.path.getsize(records[0].file)
    return sum(os.path.getsize(r.path) for r in records)


def private_dir(parent, prefix):
    """A new directory of this process's own under ``parent``, which must exist; those that
    killed runs of this node left there are removed first."""
    return atomic.private_dir(parent, prefix)


def size(n):
    """Bytes for people: '512 bytes', '3.10 MB', '2.00 GB' (never '0.00 GB')."""
    for unit, scale in (('GB', 1e9), ('MB', 1e6), ('kB', 1e3)):
        if n >= scale:
            return f'{n / scale:.2f} {unit}'
    return f'{n} bytes'


def stage(records, into):
    """Copy the images behind ``records`` into the existing directory ``into``.

    Returns (records pointing at the copies, {'seconds', 'bytes', 'gb_per_s', 'dir'});
    the copies live in a private directory ``dir`` that the caller removes.
    Refuses, before copying anything, when ``into`` has too little free space.
    """
    need = needed_bytes(records)
    if not os.path.isdir(into):
        raise mame.DatasetError(f'stage directory {into!r} does not exist or is not a directory')
    free = shutil.disk_usage(into).free
    if need > free:
        raise mame.DatasetError(f'staging needs {size(need)} in {into!r}, which has '
                                f'{size(free)} free')
    target = private_dir(into, 'ssb-stage-')
    start = time.perf_counter()
    try:
        if isinstance(records[0], hdf5.HDF5Record):
            copy = os.path.join(target, os.path.basename(records[0].file))
            shutil.copyfile(records[0].file, copy)
            staged = [dataclasses.replace(r, file=copy) for r in records]
        else:
            # Paths relative to the images' common directory: 'sub/3.jpg' and '3.jpg' are two
            # images, and by their base names one copy overwrote the other.
            top = os.path.commonpath([os.path.dirname(r.path) for r in records])
            staged = []
            for r in records:
                copy = os.path.join(target, mame.IMAGE_DIR, os.path.relpath(r.path, top))
                os.makedirs(os.path.dirname(copy), exist_ok=True)
                shutil.copyfile(r.path, copy)
                staged.append(dataclasses.replace(r, path=copy))
    except OSError as err:
        shutil.rmtree(target, ignore_errors=True)
        raise mame.DatasetError(f'staging into {into!r} failed: {err}') from None
    seconds = time.perf_counter() - start
    return staged, {'seconds': seconds, 'bytes': need, 'gb_per_s': need / seconds / 1e9,
                    'dir': target}
