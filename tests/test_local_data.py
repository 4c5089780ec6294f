"""payload/local_data.py: staging and preparing a worker's images before training, on real
datasets, with the options parsed as the payload parses them; nothing is left behind."""
import os

import numpy as np
import pytest

from conftest import make_dataset
from payload import PayloadError, cli, local_data
from sizeshape_datasets import hdf5, prepare, shapes


@pytest.fixture(scope='module')
def root(tmp_path_factory):
    """Three classes, two training images each: small JPEGs of varied shapes."""
    return make_dataset(tmp_path_factory.mktemp('data') / 'mame', images_per_class=2,
                        num_classes=3)


def options(root, *extra):
    return cli.parse_args(['--data-dir', root, *extra])


def ready(settings, records, names, worker):
    """local_data.ready as the payload calls it, with the parts of the run's settings."""
    return local_data.ready(settings.data, settings.batches, records, names, worker)


def check_prepared(records, settings):
    return local_data.check_prepared(records, settings.batches, settings.data.data_dir)


HRVS_4K = ('--variant', 'hrvs', '--pixel-budget', '4k')


def test_spec_is_the_resolution_of_the_variant(root):
    lrfs = options(root, '--variant', 'lrfs', '--image-size', '64', '--crop-size', '56')
    assert local_data.spec(lrfs.batches) == {'variant': 'lrfs', 'image_size': 64}
    assert local_data.spec(options(root, *HRVS_4K).batches) == {
        'variant': 'hrvs', 'pixel_budget': 4000, 'upscale': True}
    assert local_data.spec(options(root, *HRVS_4K, '--no-upscale').batches)['upscale'] is False


def test_nothing_asked_nothing_done(root, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    records, names = hdf5.read_dataset(root)
    with ready(options(root, *HRVS_4K), records, names, 0) as (kept, info):
        assert kept is records
    assert set(info.values()) == {None} and len(info) == 7
    assert os.listdir(tmp_path) == []


def staging(data, tmp_path, *args):
    """The data's records and class names, an empty scratch directory, and the payload's
    options with ``--stage-dir`` set to it."""
    records, names = hdf5.read_dataset(data)
    scratch = tmp_path / 'scratch'
    scratch.mkdir()
    return records, names, scratch, options(data, *args, '--stage-dir', str(scratch))


def test_staging_copies_the_images_and_removes_the_copies(root, tmp_path):
    records, names, scratch, args = staging(root, tmp_path, *HRVS_4K)
    with ready(args, records, names, 0) as (staged, info):
        (work,) = os.listdir(scratch)
        assert work.startswith('ssb-stage-')
        assert len(staged) == len(records) == 6
        for original, copy in zip(records, staged):
            assert copy.path.startswith(str(scratch / work) + os.sep)
            assert open(copy.path, 'rb').read() == open(original.path, 'rb').read()
            assert (copy.label, copy.width, copy.height) == (original.label, original.width,
                                                             original.height)
        assert info['stage_bytes'] == sum(os.path.getsize(r.path) for r in records)
        assert info['stage_s'] > 0
        assert info['stage_gb_per_s'] == pytest.approx(info['stage_bytes'] / info['stage_s']
                                                       / 1e9)
        assert info['prepare_s'] is None
        assert info['stage_dir'] == str(scratch)
    assert os.listdir(scratch) == []


def test_preparing_decodes_once_at_the_training_resolution(root, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                  # without staging, the work goes here
    records, names = hdf5.read_dataset(root)
    args = options(root, *HRVS_4K, '--prepare')
    with ready(args, records, names, 3) as (prepared, info):
        (work,) = os.listdir(tmp_path)
        assert work.startswith('ssb-prepared-')
        assert os.listdir(tmp_path / work) == ['prepared-worker3.h5']
        assert hdf5.is_prepared(prepared)
        assert hdf5.prepared_for(prepared) == local_data.spec(args.batches)
        assert [(r.height, r.width) for r in prepared] == [
            shapes.budget_shape(r.width, r.height, 4000) for r in records]
        assert [r.label for r in prepared] == [r.label for r in records]
        assert info['prepare_bytes'] == os.path.getsize(tmp_path / work / 'prepared-worker3.h5')
        # Raw pixels: at least one byte per channel of every image.
        assert info['prepare_bytes'] > 3 * sum(r.height * r.width for r in prepared)
        assert info['prepare_images_per_s'] == pytest.approx(6 / info['prepare_s'])
        assert info['stage_s'] is None
        check_prepared(prepared, args)                 # the run it was made for
    assert os.listdir(tmp_path) == []


def test_staged_then_prepared_lives_in_the_staged_copy(root, tmp_path):
    records, names, scratch, args = staging(root, tmp_path, '--variant', 'lrfs', '--image-size',
                                            '64', '--crop-size', '56', '--prepare')
    with ready(args, records, names, 0) as (prepared, info):
        (work,) = os.listdir(scratch)
        (inner,) = [n for n in os.listdir(scratch / work) if n.startswith('ssb-prepared-')]
        assert os.listdir(scratch / work / inner) == ['prepared-worker0.h5']
        assert {(r.height, r.width) for r in prepared} == {(64, 64)}
        assert info['stage_bytes'] > 0 and info['prepare_bytes'] > 3 * 64 * 64 * 6
    assert os.listdir(scratch) == []


def test_a_failure_in_training_still_removes_the_copies(root, tmp_path):
    records, names, scratch, args = staging(root, tmp_path, *HRVS_4K, '--prepare')
    with pytest.raises(KeyboardInterrupt), ready(args, records, names, 0):
        raise KeyboardInterrupt
    assert os.listdir(scratch) == []


def test_a_missing_stage_directory_is_one_error(root, tmp_path):
    records, names = hdf5.read_dataset(root)
    missing = str(tmp_path / 'missing')
    with pytest.raises(PayloadError) as err:
        with ready(options(root, *HRVS_4K, '--stage-dir', missing), records, names, 0):
            pytest.fail('the body ran')
    assert str(err.value) == f'stage directory {missing!r} does not exist or is not a directory'


@pytest.fixture(scope='module')
def prepared_file(root, tmp_path_factory):
    """The dataset prepared for HR&VS at 4k pixels, as ``sizeshape_datasets prepare`` does."""
    out = str(tmp_path_factory.mktemp('prepared') / 'hrvs-4k.h5')
    records, names = hdf5.read_dataset(root)
    prepare.prepare({'train': records}, out, names, prepare.spec('hrvs', None, 4000, True),
                    os.path.abspath(root), hdf5.fingerprint(root))
    return out


def test_prepared_data_trains_only_at_its_resolution(prepared_file, root):
    records, _ = hdf5.read_dataset(prepared_file)
    check_prepared(records, options(prepared_file, *HRVS_4K))
    # JPEGs have no resolution of their own: any run takes them.
    check_prepared(hdf5.read_dataset(root)[0], options(root, *HRVS_4K))
    for other, asks in (
            (('--variant', 'hrvs', '--pixel-budget', '8k'),
             'pixel_budget=8000, upscale=True, variant=hrvs'),
            ((*HRVS_4K, '--no-upscale'), 'pixel_budget=4000, upscale=False, variant=hrvs'),
            (('--variant', 'lrfs', '--image-size', '64', '--crop-size', '56'),
             'image_size=64, variant=lrfs')):
        with pytest.raises(PayloadError) as err:
            check_prepared(records, options(prepared_file, *other))
        assert str(err.value) == (
            f'{prepared_file!r} was prepared for pixel_budget=4000, upscale=True, variant=hrvs; '
            f'this run asks for {asks}: prepare it again, or change the options')


def test_prepared_data_is_not_prepared_again(prepared_file, tmp_path):
    records, names, scratch, args = staging(prepared_file, tmp_path, *HRVS_4K, '--prepare')
    with pytest.raises(PayloadError) as err:
        with ready(args, records, names, 0):
            pytest.fail('the body ran')
    assert str(err.value) == f'{prepared_file!r} is prepared already: drop --prepare'
    assert os.listdir(scratch) == []                    # the staged copy went too


def test_a_staged_prepared_file_holds_the_same_pixels(prepared_file, tmp_path):
    records, names, scratch, args = staging(prepared_file, tmp_path, *HRVS_4K)
    with ready(args, records, names, 0) as (staged, info):
        assert info['stage_bytes'] == os.path.getsize(prepared_file)
        for original, copy in zip(records, staged):
            assert copy.file != original.file and copy.index == original.index
            a = hdf5.Reader.read(original.file, 'train', original.index, hdf5.PREPARED)
            b = hdf5.Reader.read(copy.file, 'train', copy.index, hdf5.PREPARED)
            assert np.array_equal(np.frombuffer(a, np.uint8), np.frombuffer(b, np.uint8))
