"""sizeshape_datasets/decode.py: DCT-scaled JPEG decoding and resizing against Pillow's decoder
and a numpy resampler of its own; JPEG files, packed and prepared data give the same input."""
import io
import math
import os

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

from conftest import make_dataset
from sizeshape_datasets import decode, hdf5, mame, prepare


def jpeg(height, width, subsampling=0):
    """The bytes of a smooth colour JPEG; 4:4:4 unless asked (no chroma upsampling to differ)."""
    y, x = np.mgrid[:height, :width]
    image = np.stack([128 + 100 * np.sin(x / 9), 128 + 100 * np.cos(y / 7),
                      (x + 2 * y) % 256], axis=-1)
    out = io.BytesIO()
    Image.fromarray(image.astype(np.uint8)).save(out, 'JPEG', quality=95,
                                                 subsampling=subsampling)
    return out.getvalue()


def pillow_decode(data, ratio):
    """Pillow's (libjpeg's) DCT-scaled decoding at ``ratio``, as uint8 HxWx3."""
    with Image.open(io.BytesIO(data)) as image:
        width, height = image.size
        image.draft('RGB', (width // ratio, height // ratio))
        return np.asarray(image.convert('RGB'))


def triangle_weights(size_in, size_out, antialias):
    """Rows of weights that resample ``size_in`` pixels to ``size_out``: a triangle kernel on
    pixel centres, stretched by the scale when shrinking with antialiasing (bilinear else)."""
    scale = size_in / size_out
    width = max(scale, 1.0) if antialias else 1.0
    centres = np.arange(size_in) + 0.5
    weights = np.array([np.maximum(0, 1 - abs(centres - (i + 0.5) * scale) / width)
                        for i in range(size_out)])
    return weights / weights.sum(axis=1, keepdims=True)


def numpy_resize(image, height, width, antialias):
    rows = triangle_weights(image.shape[0], height, antialias)
    cols = triangle_weights(image.shape[1], width, antialias)
    return np.stack([rows @ image[..., c].astype(np.float64) @ cols.T
                     for c in range(image.shape[-1])], axis=-1)


def test_dct_ratio_is_the_largest_that_still_covers_the_target():
    rng = np.random.default_rng(0)
    for _ in range(2000):
        width, height = rng.integers(1, 3000, 2)
        target_h, target_w = rng.integers(1, 1000, 2)
        covering = [i for i, r in enumerate(decode.DCT_RATIOS)
                    if -(-width // r) >= target_w and -(-height // r) >= target_h]
        expected = max(covering, default=0)
        assert decode.dct_ratio_index(width, height, target_h, target_w) == expected


@pytest.mark.parametrize('width, height, target_h, target_w, ratio', [
    (800, 600, 75, 100, 8),          # exactly an eighth
    (800, 600, 76, 100, 4),          # one row more: a quarter
    (801, 601, 76, 101, 8),          # ceil(601 / 8) = 76, ceil(801 / 8) = 101
    (800, 100, 50, 100, 2),          # width and height are not swapped: the height decides
    (100, 800, 100, 50, 2),
    (100, 80, 200, 200, 1),          # upscaling decodes at full size
    (1, 1, 1, 1, 8),
])
def test_dct_ratio_examples(width, height, target_h, target_w, ratio):
    index = decode.dct_ratio_index(width, height, target_h, target_w)
    assert decode.DCT_RATIOS[index] == ratio


@pytest.mark.parametrize('index, ratio', list(enumerate(decode.DCT_RATIOS)))
def test_decode_jpeg_scales_as_libjpeg_does(index, ratio):
    data = jpeg(75, 101)
    image = decode.decode_jpeg(tf.constant(data), index).numpy()
    assert image.dtype == np.uint8
    assert image.shape == (math.ceil(75 / ratio), math.ceil(101 / ratio), 3)
    expected = pillow_decode(data, ratio)
    assert image.shape == expected.shape
    # TensorFlow's full-size IDCT is libjpeg's fast one, Pillow's the accurate one; the
    # scaled IDCTs are the same code in both.
    difference = np.abs(image.astype(int) - expected.astype(int))
    if ratio == 1:
        assert difference.mean() < 2 and difference.max() <= 24
    else:
        assert difference.max() <= 1


def test_decode_jpeg_ratio_is_a_tensor_argument():
    # One traced graph serves every ratio: the index is chosen per image at run time.
    data = jpeg(64, 48)
    decode_any = tf.function(decode.decode_jpeg)
    shapes = [tuple(decode_any(tf.constant(data), tf.constant(i)).shape) for i in range(4)]
    assert shapes == [(64, 48, 3), (32, 24, 3), (16, 12, 3), (8, 6, 3)]
    assert decode_any.experimental_get_tracing_count() == 1


def test_decode_raw_reshapes_bytes_in_row_major_order():
    pixels = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    image = decode.decode_raw(tf.constant(pixels.tobytes()), 2, 3).numpy()
    assert np.array_equal(image, pixels)
    with pytest.raises(tf.errors.InvalidArgumentError):
        decode.decode_raw(tf.constant(pixels.tobytes()), 3, 3)


@pytest.mark.parametrize('antialias', [True, False])
@pytest.mark.parametrize('height, width', [(3, 4), (6, 8), (5, 7), (12, 5), (24, 20)])
def test_resize_matches_a_triangle_kernel(antialias, height, width):
    image = np.random.default_rng(1).integers(0, 256, (12, 16, 3)).astype(np.uint8)
    out = decode.resize(tf.constant(image), height, width, antialias).numpy()
    assert out.dtype == np.float32 and out.shape == (height, width, 3)
    np.testing.assert_allclose(out, numpy_resize(image, height, width, antialias), atol=1e-3)


def test_antialiasing_matters_when_shrinking():
    image = np.random.default_rng(2).integers(0, 256, (40, 40, 3)).astype(np.uint8)
    smooth = decode.resize(tf.constant(image), 5, 5, True).numpy()
    sharp = decode.resize(tf.constant(image), 5, 5, False).numpy()
    assert smooth.std() < 0.5 * sharp.std()          # averages 64 pixels, not 4


def test_resize_leaves_an_image_of_the_target_shape_as_it_is():
    image = np.random.default_rng(3).integers(0, 256, (7, 9, 3)).astype(np.uint8)
    for antialias in (True, False):
        out = decode.resize(tf.constant(image), 7, 9, antialias).numpy()
        assert out.dtype == np.float32 and np.array_equal(out, image.astype(np.float32))


@pytest.fixture(scope='module')
def dataset(tmp_path_factory):
    """A MAMe root (six JPEGs of several shapes), its packed file, the train records of each,
    and HR&VS targets at a 2k pixel budget (DCT ratios above 1 for the larger images)."""
    top = tmp_path_factory.mktemp('decode')
    root = make_dataset(top / 'mame', images_per_class=2, num_classes=3, scale=0.3)
    packed = str(top / 'packed.h5')
    hdf5.pack(root, packed)
    files, names = mame.read_mame(root, 'train')
    spec = prepare.spec('hrvs', None, 2000, True)
    return {'root': root, 'names': names, 'files': files,
            'packed': hdf5.read_hdf5(packed)[0], 'spec': spec,
            'targets': prepare.targets(files, spec), 'top': top}


def load_all(records, targets, antialias, *columns):
    ds, load = decode.images(records, targets, antialias, *columns)
    return [tuple(t.numpy() for t in load(*element)) for element in ds]


def test_images_of_jpeg_files(dataset):
    files, targets = dataset['files'], dataset['targets']
    assert any(decode.dct_ratio_index(r.width, r.height, *t) > 0
               for r, t in zip(files, targets))
    rows = load_all(files, targets, True, [10 * i for i in range(len(files))])
    assert len(rows) == len(files)
    for i, (record, (h, w), (image, label, extra)) in enumerate(zip(files, targets, rows)):
        assert image.dtype == np.float32 and image.shape == (h, w, 3)
        assert label == record.label and extra == 10 * i
        # Pillow's decoding at the same DCT ratio, resized by numpy.
        with open(record.path, 'rb') as f:
            data = f.read()
        ratio = decode.DCT_RATIOS[decode.dct_ratio_index(record.width, record.height, h, w)]
        expected = numpy_resize(pillow_decode(data, ratio), h, w, antialias=True)
        assert np.abs(image - expected).max() <= 1


def test_reader_keys(dataset):
    keys, read = decode.reader(dataset['files'])
    assert keys == [r.path for r in dataset['files']]
    assert read is tf.io.read_file
    keys, read = decode.reader(dataset['packed'])
    assert keys == list(range(len(dataset['packed'])))
    for record, key in zip(dataset['files'], keys):
        with open(record.path, 'rb') as f:
            assert read(tf.constant(key, tf.int64)).numpy() == f.read()


def test_packed_data_gives_the_pixels_of_the_files(dataset):
    targets = dataset['targets']
    for antialias in (True, False):
        from_files = load_all(dataset['files'], targets, antialias)
        from_packed = load_all(dataset['packed'], targets, antialias)
        for (a, label_a), (b, label_b) in zip(from_files, from_packed):
            assert np.array_equal(a, b) and label_a == label_b


def test_prepared_data_holds_the_pixels_training_computes(dataset):
    out = str(dataset['top'] / 'prepared.h5')
    prepare.prepare({'train': dataset['files']}, out, dataset['names'], dataset['spec'],
                    dataset['root'])
    prepared, _ = hdf5.read_hdf5(out)
    assert hdf5.is_prepared(prepared) and os.path.getsize(out) > 0
    targets = dataset['targets']
    assert [(r.height, r.width) for r in prepared] == targets
    from_jpeg = load_all(dataset['files'], targets, decode.ANTIALIAS['hrvs'])
    from_prepared = load_all(prepared, targets, decode.ANTIALIAS['hrvs'])
    for (jpeg_image, _), (raw_image, _) in zip(from_jpeg, from_prepared):
        assert np.array_equal(raw_image, np.clip(np.round(jpeg_image), 0, 255))
