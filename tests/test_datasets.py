import csv
import filecmp
import os
import re
import shutil
import statistics
import warnings

import numpy as np
import pytest
from PIL import Image

from conftest import BOMB_SIDE, image_path, make_dataset, make_quirky_root
from sizeshape_datasets import derive_mame_shapes, mame, mame_shapes, stage, synthetic

# The header of the real MAMe_dataset.csv (HPAI-BSC/MAMe-baselines, dataset/).
REAL_MAME_HEADER = ('Image file,Medium,Museum,Museum-based instance ID,Subset,'
                    'Width,Height,Product size,Aspect ratio')


def test_committed_histogram_covers_all_mame_images():
    cells, counts = mame_shapes.load_histogram()
    assert counts.sum() == 37407          # every image of MAMe, train + val + test
    assert len(cells) == len({tuple(c) for c in cells})


def test_sampled_shapes_follow_mame_distribution():
    shapes = mame_shapes.sample_shapes(20000, np.random.default_rng(1))
    pixels = [w * h for w, h in shapes]
    aspects = [w / h for w, h in shapes]
    # MAMe: median 8.1 Mpx, aspect ratio 0.112..15 with median 0.91.
    assert 7.0e6 < statistics.median(pixels) < 9.5e6
    assert 0.85 < statistics.median(aspects) < 0.97
    assert 0.10 < min(aspects) and max(aspects) < 16.5
    assert min(pixels) > 1.5e5 and max(pixels) < 4.5e8


def test_derive_reproduces_cells(tmp_path):
    metadata = tmp_path / 'MAMe_dataset.csv'
    metadata.write_text(REAL_MAME_HEADER + '\n'
                        'a.jpg,Bronze,M,1,train,3000.0,3000.0,9000000.0,1.0\n'
                        'b.jpg,Bronze,M,2,val,3010.0,3000.0,9030000.0,1.0033\n'
                        'c.jpg,Glass,M,3,test,300.0,3000.0,900000.0,0.1\n')
    out = tmp_path / 'hist.csv'
    derive_mame_shapes.main([str(metadata), '--out', str(out)])
    cells, counts = mame_shapes.load_histogram(str(out))
    assert sorted(zip(map(tuple, cells.tolist()), counts.tolist())) == [
        (mame_shapes.cell_of(300, 3000), 1), (mame_shapes.cell_of(3000, 3000), 2)]


def test_generator_writes_mame_layout(tmp_path):
    root = make_dataset(tmp_path / 'd', images_per_class=2, val_per_class=1)
    with open(os.path.join(root, mame.METADATA_FILE)) as f:
        assert f.readline().strip() == REAL_MAME_HEADER
    train, names = mame.read_mame(root, 'train')
    val, _ = mame.read_mame(root, 'val')
    assert names == synthetic.MEDIUMS
    assert len(train) == 58 and len(val) == 29
    assert sorted({r.label for r in train}) == list(range(29))
    assert len({(r.width, r.height) for r in train}) > 40    # variable shapes
    for r in train[:5]:
        with Image.open(r.path) as img:
            assert img.format == 'JPEG' and img.size == (r.width, r.height)


def test_generator_is_deterministic(tmp_path):
    a = make_dataset(tmp_path / 'a', seed=7)
    b = make_dataset(tmp_path / 'b', seed=7)
    c = make_dataset(tmp_path / 'c', seed=8)
    names = sorted(os.listdir(os.path.join(a, 'data')))
    match, mismatch, errors = filecmp.cmpfiles(os.path.join(a, 'data'), os.path.join(b, 'data'),
                                               names, shallow=False)
    assert match == names and not mismatch and not errors
    assert filecmp.cmp(os.path.join(a, mame.METADATA_FILE), os.path.join(b, mame.METADATA_FILE),
                       shallow=False)
    assert not filecmp.cmp(os.path.join(a, mame.METADATA_FILE),
                           os.path.join(c, mame.METADATA_FILE), shallow=False)


def test_class_content_differs(tmp_path):
    rng = np.random.default_rng(0)
    means = [synthetic.class_image(label, 64, 64, rng, 29).mean(axis=(0, 1))
             for label in range(29)]
    distances = [np.linalg.norm(means[i] - means[j]) for i in range(29) for j in range(i)]
    assert min(distances) > 1.0


def test_scaled_shape_keeps_bounds():
    assert synthetic.scaled_shape(2667, 2900, 0.05, 32, 1.0) == (133, 145)
    w, h = synthetic.scaled_shape(32683, 23577, 1.0, 32, 1.0)       # cap: 1 Mpx
    assert w * h <= 10**6 * 1.01 and abs(w / h - 32683 / 23577) < 0.01
    assert synthetic.scaled_shape(500, 33, 0.05, 32, None) == (32, 32)
    assert synthetic.scaled_shape(32683, 23577, 1.0, 32, None) == (32683, 23577)   # real size


def test_generator_refuses_to_overwrite(tmp_path):
    (tmp_path / 'd').mkdir()
    with pytest.raises(FileExistsError):
        make_dataset(tmp_path / 'd')


def test_generator_leaves_nothing_when_interrupted(tmp_path, monkeypatch):
    def fail(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(synthetic, 'class_image', fail)
    with pytest.raises(KeyboardInterrupt):
        make_dataset(tmp_path / 'd')
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize('damage, message', [
    ('missing_dir', 'does not exist'),
    ('empty_dir', 'is empty'),
    ('no_csv', 'no MAMe_dataset.csv'),
    ('missing_column', r"missing columns \['Subset'\]"),
    ('missing_image', 'is missing'),
    ('truncated', 'truncated JPEG'),
    ('garbage', 'corrupt image'),
    ('png', 'not JPEG'),
    ('unknown_medium', 'is not in MAMe_labels.csv'),
])
def test_reader_errors_name_the_problem(tmp_path, damage, message):
    root = make_dataset(tmp_path / 'd')
    metadata = os.path.join(root, mame.METADATA_FILE)
    first = image_path(root, 0)
    if damage == 'missing_dir':
        root = str(tmp_path / 'nowhere')
    elif damage == 'empty_dir':
        root = str(tmp_path / 'empty')
        os.mkdir(root)
    elif damage == 'no_csv':
        os.remove(metadata)
    elif damage == 'missing_column':
        rows = list(csv.reader(open(metadata)))
        with open(metadata, 'w', newline='') as f:
            csv.writer(f).writerows([row[:4] + row[5:] for row in rows])
    elif damage == 'missing_image':
        os.remove(first)
    elif damage == 'truncated':
        data = open(first, 'rb').read()
        open(first, 'wb').write(data[:len(data) // 2])
    elif damage == 'garbage':
        open(first, 'wb').write(b'not an image at all')
    elif damage == 'png':
        Image.new('RGB', (40, 40)).save(first, format='PNG')
    elif damage == 'unknown_medium':
        text = open(metadata).read().replace('Albumen photograph', 'Papyrus', 1)
        open(metadata, 'w').write(text)
    with pytest.raises(mame.DatasetError, match=message):
        mame.read_mame(root)


@pytest.fixture(scope='module')
def quirky_root(tmp_path_factory):
    return make_quirky_root(tmp_path_factory.mktemp('quirks') / 'mame')


def test_reader_takes_the_published_quirks(quirky_root):
    with warnings.catch_warnings():
        warnings.simplefilter('error')        # no DecompressionBombWarning either
        train, names = mame.read_mame(quirky_root, 'train')
        val, _ = mame.read_mame(quirky_root, 'val')
    assert names == synthetic.MEDIUMS
    woven = synthetic.MEDIUMS.index('Woven fabric')
    assert [(os.path.basename(r.path), r.label) for r in train] == [
        ('0.jpg', woven), ('1949.565.5.jpeg', synthetic.MEDIUMS.index('Oil on canvas')),
        ('2.jpg', synthetic.MEDIUMS.index('Graphite'))]
    assert (train[2].width, train[2].height) == (BOMB_SIDE, BOMB_SIDE)   # from the header
    assert train[2].pixels > Image.MAX_IMAGE_PIXELS       # the limit is still in force
    assert [r.label for r in val] == [woven]
    assert mame.count_rows(quirky_root, 'train') == 3


def test_generator_writes_the_published_quirks(tmp_path):
    root = make_dataset(tmp_path / 'd', images_per_class=2, val_per_class=1)
    with open(os.path.join(root, mame.METADATA_FILE), newline='') as f:
        rows = list(csv.DictReader(f))
    assert {r['Medium'] for r in rows} == (set(synthetic.MEDIUMS) - {'Woven fabric'}) | {
        'Woven fabric '}
    assert {r['Museum'] for r in rows} <= set(synthetic.MUSEUMS)
    dotted = [r['Image file'] for r in rows if r['Image file'].endswith('.jpeg')]
    assert dotted and all(name.count('.') == 2 for name in dotted)
    assert any(',' in r['Museum-based instance ID'] for r in rows)
    modes = set()
    for r in rows:
        with Image.open(os.path.join(root, 'data', r['Image file'])) as img:
            modes.add((img.mode, bool(img.info.get('progressive'))))
    assert {('RGB', False), ('RGB', True), ('L', False), ('CMYK', False)} <= modes


def test_generated_images_are_photo_like(tmp_path):
    """JPEG sizes of photographs (about 0.4 bytes per pixel at quality 90), not of flat
    synthetic patterns (a flat image costs 0.01)."""
    root = make_dataset(tmp_path / 'd', images_per_class=1, num_classes=3, scale=0.3)
    images, _ = mame.read_mame(root)
    ratio = (sum(os.path.getsize(r.path) for r in images) / sum(r.pixels for r in images))
    assert 0.25 < ratio < 0.7


@pytest.mark.parametrize('row, message', [
    ('9.jpg,Bronze,M,1,training,300.0,200.0,60000.0,1.5', "subset 'training' is not one of"),
    ('9.jpg,Bronze,M,1,train', 'expected 9 fields'),
    (',Bronze,M,1,train,300.0,200.0,60000.0,1.5', 'empty "Image file"'),
    ('9.jpg,Papyrus,M,1,train,300.0,200.0,60000.0,1.5', "medium 'Papyrus' is not in"),
    ('9.jpg,Bronze,M,1,train,300.0,200.0,60000.0,1.5', "image '.*9.jpg' is missing"),
])
def test_malformed_row_is_named_by_file_and_line(quirky_root, tmp_path, row, message):
    root = tmp_path / 'mame'
    shutil.copytree(quirky_root, root)
    with open(root / 'MAMe_dataset.csv', 'a') as f:
        f.write(row + '\n')
    where = f'^{re.escape(str(root))}/MAMe_dataset.csv:6: '
    with pytest.raises(mame.DatasetError, match=where + f'.*{message}'):
        mame.read_mame(str(root))


def test_staging_refuses_when_the_target_is_too_small(tiny_root_copy, tmp_path, monkeypatch):
    images, _ = mame.read_mame(tiny_root_copy)
    monkeypatch.setattr(stage.shutil, 'disk_usage', lambda path: shutil._ntuple_diskusage(
        10**9, 10**9 - 1000, 1000))
    # The sizes in units that show them (this said "0.00 GB free").
    with pytest.raises(mame.DatasetError, match=r"^staging needs 1\.\d\d MB in '.*', which has "
                                                r"1\.00 kB free$"):
        stage.stage(images, str(tmp_path))
    assert os.listdir(tmp_path) == ['d']                 # nothing copied, nothing left


@pytest.fixture
def tiny_root_copy(tmp_path):
    return make_dataset(tmp_path / 'd')
