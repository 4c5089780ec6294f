"""Reader for the MAMe layout: ``<root>/MAMe_dataset.csv``, ``<root>/MAMe_labels.csv``
and ``<root>/data/<Image file>``.

The real MAMe release and the synthetic generator share this layout, so the
payload reads both the same way. Shapes come from the image files themselves:
the CSV's Width/Height are the full-resolution sizes, also in the 256x256
release.

The published metadata is read as it is (see docs/data.md):
- medium names are matched after stripping surrounding whitespace: every row
  of one class says ``'Woven fabric '`` where MAMe_labels.csv says ``Woven fabric``;
- image files end in ``.jpg`` or ``.jpeg``, as the ``Image file`` column says;
- images above Pillow's decompression-bomb limit (the largest MAMe image has
  373 Mpx) are read on purpose: only their header is read here.
"""
import contextlib
import csv
import dataclasses
import hashlib
import os

from PIL import Image, UnidentifiedImageError

from ssb_contract.options import SUBSETS

METADATA_FILE = 'MAMe_dataset.csv'
LABELS_FILE = 'MAMe_labels.csv'
IMAGE_DIR = 'data'
COLUMNS = ['Image file', 'Medium', 'Museum', 'Museum-based instance ID', 'Subset',
           'Width', 'Height', 'Product size', 'Aspect ratio']
JPEG_END_OF_IMAGE = b'\xff\xd9'


class DatasetError(Exception):
    """A dataset problem a user can fix; the message names the file."""


@dataclasses.dataclass(frozen=True)
class ImageRecord:
    path: str
    label: int
    width: int
    height: int

    @property
    def pixels(self):
        return self.width * self.height


@dataclasses.dataclass(frozen=True)
class MetadataRow:
    """One row of MAMe_dataset.csv, with where it stands for error messages."""
    where: str          # '<csv path>:<line>'
    image_file: str
    medium: str         # stripped of surrounding whitespace
    subset: str


@contextlib.contextmanager
def _reading(path):
    """Open a metadata file as UTF-8 text (a leading BOM dropped, as spreadsheets save it);
    every way of failing to read it is a DatasetError naming it."""
    try:
        with open(path, newline='', encoding='utf-8-sig') as f:
            yield f
    except UnicodeDecodeError as err:
        raise DatasetError(f'{path!r} is not UTF-8 text (byte {err.object[err.start]:#04x}): '
                           f'save it as UTF-8') from None
    except csv.Error as err:
        raise DatasetError(f'{path!r}: not CSV as expected: {err}') from None
    except OSError as err:
        raise DatasetError(f'cannot read {path!r}: {err.strerror or err}') from None


def image_path(root, image_file):
    """``<root>/data/<image_file>``; ValueError if the name leaves that directory."""
    if '\0' in image_file or os.path.isabs(image_file) or \
            '..' in os.path.normpath(image_file).split(os.sep):
        raise ValueError(f'"Image file" {image_file!r} is not a path inside {IMAGE_DIR}/')
    return os.path.join(root, IMAGE_DIR, image_file)


def read_labels(root):
    """{medium: label index}, names stripped of surrounding whitespace."""
    path = os.path.join(root, LABELS_FILE)
    if not os.path.isfile(path):
        raise DatasetError(f'no {LABELS_FILE} in {root!r}')
    with _reading(path) as f:
        rows = [r for r in csv.reader(f) if r]
    try:
        labels = {name.strip(): int(index) for index, name in rows}
    except ValueError:
        raise DatasetError(f'{path!r}: expected lines of "index,medium"') from None
    if sorted(labels.values()) != list(range(len(labels))):
        raise DatasetError(f'{path!r}: label indices must be 0..{len(labels) - 1}, '
                           'each medium once')
    return labels


def read_metadata(root):
    """Every row of MAMe_dataset.csv as a MetadataRow; malformed rows are named by line."""
    path = os.path.join(root, METADATA_FILE)
    if not os.path.isfile(path):
        raise DatasetError(f'no {METADATA_FILE} in {root!r} (expected the MAMe layout: '
                           f'{METADATA_FILE}, {LABELS_FILE} and {IMAGE_DIR}/<Image file>)')
    rows = []
    with _reading(path) as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise DatasetError(f'{path!r}: missing columns {missing}')
        for row in reader:
            where = f'{path}:{reader.line_num}'
            if None in row or None in row.values():
                raise DatasetError(f'{where}: expected {len(reader.fieldnames)} fields')
            image_file = row['Image file'].strip()
            if not image_file:
                raise DatasetError(f'{where}: empty "Image file"')
            try:
                image_path(root, image_file)
            except ValueError as err:
                raise DatasetError(f'{where}: {err}') from None
            if row['Subset'].strip() not in SUBSETS:
                raise DatasetError(f'{where}: {image_file}: subset {row["Subset"]!r} is not '
                                   f'one of {", ".join(SUBSETS)}')
            rows.append(MetadataRow(where, image_file, row['Medium'].strip(),
                                    row['Subset'].strip()))
    return rows


def check_root(root):
    if not os.path.isdir(root):
        raise DatasetError(f'data directory {root!r} does not exist')
    try:
        entries = os.listdir(root)
    except OSError as err:
        raise DatasetError(f'cannot read data directory {root!r}: {err.strerror or err}') from None
    if not entries:
        raise DatasetError(f'data directory {root!r} is empty')


@contextlib.contextmanager
def no_pixel_limit():
    """Lift Pillow's decompression-bomb limit: it guards against hostile files, and a
    373 Mpx museum scan is not one. Only headers are read under it."""
    saved = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = None
    try:
        yield
    finally:
        Image.MAX_IMAGE_PIXELS = saved


def image_shape(path):
    """Return (width, height) from the JPEG header; reject unreadable or truncated files.

    A truncated JPEG decodes "successfully" in TensorFlow with grey padding, so
    the missing end-of-image marker is checked here, without decoding.
    """
    try:
        with no_pixel_limit(), Image.open(path) as img:
            width, height = img.size
            fmt = img.format
    except FileNotFoundError:
        raise DatasetError(f'image {path!r} is missing') from None
    except PermissionError as err:
        raise DatasetError(f'cannot read image {path!r}: {err.strerror}') from None
    except (UnidentifiedImageError, OSError) as err:
        raise DatasetError(f'corrupt image {path!r}: {err}') from None
    if fmt != 'JPEG':
        raise DatasetError(f'image {path!r} is {fmt}, not JPEG')
    with open(path, 'rb') as f:
        f.seek(-2, os.SEEK_END)
        if f.read(2) != JPEG_END_OF_IMAGE:
            raise DatasetError(f'corrupt image {path!r}: truncated JPEG (no end-of-image marker)')
    return width, height


def read_mame(root, subset='train'):
    """Return (images of ``subset``, class names ordered by label index)."""
    if subset not in SUBSETS:
        raise DatasetError(f'unknown subset {subset!r}; choose from {SUBSETS}')
    check_root(root)
    labels = read_labels(root)
    images = []
    for row in read_metadata(root):
        if row.subset != subset:
            continue
        if row.medium not in labels:
            raise DatasetError(f'{row.where}: {row.image_file}: medium {row.medium!r} is not '
                               f'in {LABELS_FILE}')
        path = image_path(root, row.image_file)
        try:
            width, height = image_shape(path)
        except DatasetError as err:
            raise DatasetError(f'{row.where}: {err}') from None
        images.append(ImageRecord(path, labels[row.medium], width, height))
    if not images:
        raise DatasetError(f'no {subset!r} images listed in {os.path.join(root, METADATA_FILE)!r}')
    names = sorted(labels, key=labels.get)
    return images, names


def metadata_fingerprint(root):
    """'sha256:<hex>' of the metadata and label files of ``root``: which dataset this is."""
    digest = hashlib.sha256()
    for name in (METADATA_FILE, LABELS_FILE):
        with open(os.path.join(root, name), 'rb') as f:
            digest.update(f.read())
    return f'sha256:{digest.hexdigest()}'


def count_rows(root, subset):
    """Rows of ``subset`` in the metadata of ``root`` (no image is opened)."""
    return sum(1 for row in read_metadata(root) if row.subset == subset)
