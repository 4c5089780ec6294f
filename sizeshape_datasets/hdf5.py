"""A MAMe-layout dataset packed into one HDF5 file, for parallel filesystems.

Thousands of small JPEG files cost a metadata operation each on Lustre or GPFS;
one HDF5 file costs one open. ``python -m sizeshape_datasets pack ROOT --out FILE.h5``
stores, per subset (group ``/train``, ``/val``, ``/test``, those with images):

- ``jpeg``: the encoded JPEG bytes of each image, unchanged (variable-length uint8),
  so that training decodes exactly what it would decode from the files; or, in a
  file made by ``prepare`` (prepare.py), ``pixels``: each image decoded and resized
  once to its training resolution (uint8, row-major height x width x 3);
- ``label`` (int32), ``width`` and ``height`` (int32, from the JPEG headers, or the
  prepared shape);
- ``file``: the image's file name in the MAMe layout (``Image file``);

and, as attributes of the root, ``class_names`` (in label order), ``format``
(``FORMAT``), ``format_version``, ``source`` (the root it was packed from),
``fingerprint`` (which dataset: the sha256 of the source's metadata files, and for a
prepared file of those and the resolution) and, in a prepared file, ``prepared`` (JSON:
the variant and resolution it was prepared for).

The images are validated (headers, end-of-image marker) while packing, as the
JPEG reader does; the file is written to a temporary sibling and renamed into
place, and an existing file is never overwritten.
"""
import dataclasses
import hashlib
import json
import os

import numpy as np

from ssb_common import atomic
from ssb_contract.options import SUBSETS
from sizeshape_datasets import mame

FORMAT = 'size-shape-bench MAMe pack'
FORMAT_VERSION = 1
COLUMNS = ('label', 'width', 'height', 'file')
ENCODED, PREPARED = 'jpeg', 'pixels'        # the image bytes: as packed, or as prepared
HDF5_SUFFIXES = ('.h5', '.hdf5')


@dataclasses.dataclass(frozen=True)
class HDF5Record(mame.ImageRecord):
    """An image stored in a packed file: ``path`` names it for messages, ``index`` finds it."""
    file: str = ''
    subset: str = ''
    index: int = -1
    column: str = ENCODED
    prepared: str = ''        # the file's ``prepared`` attribute (JSON), if it has one


def is_prepared(records):
    """True if ``records`` come from a prepared file (pixels at training resolution)."""
    return isinstance(records[0], HDF5Record) and records[0].column == PREPARED


def prepared_for(records):
    """What a prepared file was prepared for (dict), or None for other records."""
    return json.loads(records[0].prepared) if is_prepared(records) else None


def h5py_module():
    try:
        import h5py
    except ImportError:
        raise mame.DatasetError('reading or writing HDF5 needs h5py: pip install h5py') from None
    return h5py


def subsets_of(root):
    """The subsets the metadata of ``root`` lists images for, in SUBSETS order."""
    mame.check_root(root)
    listed = {row.subset for row in mame.read_metadata(root)}
    return [s for s in SUBSETS if s in listed]


def pack(root, out, subsets=None):
    """Pack the MAMe-layout dataset at ``root`` into the HDF5 file ``out`` (must not exist).

    Returns {subset: images packed}.
    """
    h5py = h5py_module()
    subsets = subsets or subsets_of(root)
    if not subsets:
        raise mame.DatasetError(f'no images listed in {os.path.join(root, mame.METADATA_FILE)!r}')
    counts = {}
    with atomic.file(out, suffix='.h5') as tmp, h5py.File(tmp, 'w') as f:
        class_names = None
        for subset in subsets:
            records, names = mame.read_mame(root, subset)
            class_names = names
            group = f.create_group(subset)
            jpeg = group.create_dataset('jpeg', (len(records),),
                                        dtype=h5py.vlen_dtype(np.uint8))
            for i, record in enumerate(records):
                with open(record.path, 'rb') as image:
                    jpeg[i] = np.frombuffer(image.read(), dtype=np.uint8)
            write_columns(group, records, [os.path.basename(r.path) for r in records])
            counts[subset] = len(records)
        write_attributes(f, class_names, os.path.abspath(root), mame.metadata_fingerprint(root))
    return counts


def write_columns(group, records, files):
    """The per-image columns but the image bytes, as ``read_hdf5`` reads them back."""
    group.create_dataset('label', data=np.array([r.label for r in records], np.int32))
    group.create_dataset('width', data=np.array([r.width for r in records], np.int32))
    group.create_dataset('height', data=np.array([r.height for r in records], np.int32))
    group.create_dataset('file', data=files, dtype=h5py_module().string_dtype())


def write_attributes(f, class_names, source, fingerprint, prepared=None):
    f.attrs['class_names'] = np.array(class_names, dtype=h5py_module().string_dtype())
    f.attrs['format'] = FORMAT
    f.attrs['format_version'] = FORMAT_VERSION
    f.attrs['source'] = source
    if fingerprint:
        f.attrs['fingerprint'] = fingerprint
    if prepared is not None:
        f.attrs['prepared'] = json.dumps(prepared, sort_keys=True)


def fingerprint(location):
    """Which dataset ``location`` holds: its metadata's sha256, or a packed or prepared
    file's stored ``fingerprint``; None for a file packed before files stored one."""
    if os.path.isdir(location):
        return mame.metadata_fingerprint(location)
    with open_file(location) as f:
        value = f.attrs.get('fingerprint')
    return str(value) if value is not None else None


def derived_fingerprint(source, prepared):
    """The fingerprint of ``source``'s data prepared at the resolution ``prepared``."""
    digest = hashlib.sha256(f'{source}|{json.dumps(prepared, sort_keys=True)}'.encode())
    return f'sha256:{digest.hexdigest()}' if source else None


def is_hdf5(path):
    """True if ``path`` is a file with the HDF5 signature (whatever its extension)."""
    return os.path.isfile(path) and h5py_module().is_hdf5(path)


def open_file(path):
    """Open a packed file read-only, without HDF5 file locking (often unsupported or
    slow on parallel filesystems; the file is never written after packing)."""
    h5py = h5py_module()
    try:
        return h5py.File(path, 'r', locking=False)
    except TypeError:             # h5py < 3.5 has no locking argument
        return h5py.File(path, 'r')


def _check(f, path, subset):
    if f.attrs.get('format') != FORMAT:
        raise mame.DatasetError(f'{path!r} is an HDF5 file but not one made by '
                                '"python -m sizeshape_datasets pack" (no format attribute '
                                f'{FORMAT!r})')
    if subset not in f:
        present = [s for s in SUBSETS if s in f]
        raise mame.DatasetError(f'{path!r} has no {subset!r} images (subsets: {present})')
    group = f[subset]
    datasets = (PREPARED if 'prepared' in f.attrs else ENCODED,) + COLUMNS
    missing = [d for d in datasets if d not in group]
    if missing:
        raise mame.DatasetError(f'{path!r}: subset {subset!r} lacks the datasets {missing}')
    lengths = {d: len(group[d]) for d in datasets}
    if len(set(lengths.values())) != 1:
        raise mame.DatasetError(f'{path!r}: subset {subset!r} has datasets of different '
                                f'lengths {lengths}')
    if 'class_names' not in f.attrs:
        raise mame.DatasetError(f'{path!r} lacks the class_names attribute')


def read_hdf5(path, subset='train'):
    """Return (records of ``subset``, class names ordered by label index), like mame.read_mame."""
    if subset not in SUBSETS:
        raise mame.DatasetError(f'unknown subset {subset!r}; choose from {SUBSETS}')
    if not os.path.exists(path):
        raise mame.DatasetError(f'HDF5 file {path!r} does not exist')
    if not is_hdf5(path):
        raise mame.DatasetError(f'{path!r} is a file but not an HDF5 file; --data-dir takes '
                                'a MAMe-layout directory or a file made by '
                                '"python -m sizeshape_datasets pack"')
    try:
        with open_file(path) as f:
            _check(f, path, subset)
            names = [n.decode() if isinstance(n, bytes) else str(n)
                     for n in f.attrs['class_names']]
            group = f[subset]
            labels, widths, heights = (group[d][()] for d in ('label', 'width', 'height'))
            files = group['file'].asstr()[()]
            prepared = f.attrs.get('prepared', '')
    except OSError as err:
        raise mame.DatasetError(f'cannot read HDF5 file {path!r}: {err}') from None
    if len(labels) == 0:
        raise mame.DatasetError(f'{path!r} has no {subset!r} images')
    if labels.min() < 0 or labels.max() >= len(names):
        raise mame.DatasetError(f'{path!r}: labels outside 0..{len(names) - 1}')
    records = [HDF5Record(f'{path}:{subset}/{name}', int(label), int(width), int(height),
                          file=path, subset=subset, index=i,
                          column=PREPARED if prepared else ENCODED, prepared=prepared)
               for i, (name, label, width, height)
               in enumerate(zip(files, labels, widths, heights))]
    return records, names


def read_dataset(location, subset='train'):
    """Records and class names from a MAMe-layout directory or a packed HDF5 file."""
    if os.path.isfile(location) or (not os.path.exists(location)
                                    and location.lower().endswith(HDF5_SUFFIXES)):
        return read_hdf5(location, subset)
    return mame.read_mame(location, subset)


def count(path, subset):
    """Images of ``subset`` in a packed file (0 if it has none)."""
    with open_file(path) as f:
        return len(f[subset]['label']) if subset in f else 0


class Reader:
    """Reads one image's bytes by index; one open file per process and path, shared by
    the input pipeline's threads (h5py serialises calls into the HDF5 library)."""

    _files = {}

    @classmethod
    def read(cls, path, subset, index, column=ENCODED):
        key = (path, os.getpid())
        f = cls._files.get(key)
        if f is None:
            f = cls._files[key] = open_file(path)
        return f[subset][column][index].tobytes()
