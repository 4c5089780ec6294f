"""Reader for the MAMe layout: ``<root>/MAMe_dataset.csv``, ``<root>/MAMe_labels.csv``
and ``<root>/data/<Image file>``.

The real MAMe release and the synthetic generator share this layout, so the
payload reads both the same way. Shapes come from the image files themselves:
the CSV's Width/Height are the full-resolution sizes, also in the 256x256
release.
"""
import csv
import dataclasses
import os

from PIL import Image, UnidentifiedImageError

METADATA_FILE = 'MAMe_dataset.csv'
LABELS_FILE = 'MAMe_labels.csv'
IMAGE_DIR = 'data'
COLUMNS = ['Image file', 'Medium', 'Museum', 'Museum-based instance ID', 'Subset',
           'Width', 'Height', 'Product size', 'Aspect ratio']
SUBSETS = ('train', 'val', 'test')
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


def read_labels(root):
    path = os.path.join(root, LABELS_FILE)
    if not os.path.isfile(path):
        raise DatasetError(f'no {LABELS_FILE} in {root!r}')
    with open(path, newline='') as f:
        rows = [r for r in csv.reader(f) if r]
    try:
        labels = {name: int(index) for index, name in rows}
    except ValueError:
        raise DatasetError(f'{path!r}: expected lines of "index,medium"') from None
    if sorted(labels.values()) != list(range(len(labels))):
        raise DatasetError(f'{path!r}: label indices must be 0..{len(labels) - 1}')
    return labels


def read_metadata(root):
    path = os.path.join(root, METADATA_FILE)
    if not os.path.isfile(path):
        raise DatasetError(f'no {METADATA_FILE} in {root!r} (expected the MAMe layout: '
                           f'{METADATA_FILE}, {LABELS_FILE} and {IMAGE_DIR}/<Image file>)')
    with open(path, newline='') as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise DatasetError(f'{path!r}: missing columns {missing}')
        return list(reader)


def check_root(root):
    if not os.path.isdir(root):
        raise DatasetError(f'data directory {root!r} does not exist')
    if not os.listdir(root):
        raise DatasetError(f'data directory {root!r} is empty')


def image_shape(path):
    """Return (width, height) from the JPEG header; reject unreadable or truncated files.

    A truncated JPEG decodes "successfully" in TensorFlow with grey padding, so
    the missing end-of-image marker is checked here, without decoding.
    """
    try:
        with Image.open(path) as img:
            width, height = img.size
            fmt = img.format
    except FileNotFoundError:
        raise DatasetError(f'image {path!r} is missing') from None
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
        if row['Subset'] != subset:
            continue
        medium = row['Medium']
        if medium not in labels:
            raise DatasetError(f'{row["Image file"]}: medium {medium!r} is not in {LABELS_FILE}')
        path = os.path.join(root, IMAGE_DIR, row['Image file'])
        width, height = image_shape(path)
        images.append(ImageRecord(path, labels[medium], width, height))
    if not images:
        raise DatasetError(f'no {subset!r} images listed in {os.path.join(root, METADATA_FILE)!r}')
    names = sorted(labels, key=labels.get)
    return images, names
