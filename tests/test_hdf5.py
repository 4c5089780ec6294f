"""The packed HDF5 form of a dataset: packing, reading, errors, and identical training input."""
import json
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import REPO, image_path, make_dataset, payload_error, run_payload
from sizeshape_datasets import hdf5, mame


@pytest.fixture(scope='module')
def packed(tiny_dataset, tmp_path_factory):
    out = tmp_path_factory.mktemp('packed') / 'mame.h5'
    counts = hdf5.pack(tiny_dataset, str(out))
    assert counts == {'train': 29}
    return str(out)


def summary_of(proc):
    assert proc.returncode == 0, proc.stderr
    (line,) = [text for text in proc.stdout.splitlines() if text.startswith('SSB-SUMMARY ')]
    return json.loads(line.split(' ', 1)[1])


def epochs_of(proc):
    return [json.loads(text.split(' ', 1)[1]) for text in proc.stdout.splitlines()
            if text.startswith('SSB-EPOCH ')]


def test_round_trip_keeps_records_bytes_and_classes(tiny_dataset, packed):
    jpeg_records, jpeg_names = mame.read_mame(tiny_dataset)
    records, names = hdf5.read_hdf5(packed)
    assert names == jpeg_names
    assert [(r.label, r.width, r.height) for r in records] == \
        [(r.label, r.width, r.height) for r in jpeg_records]
    for record, original in zip(records, jpeg_records):
        assert record.path == f'{packed}:train/{os.path.basename(original.path)}'
        with open(original.path, 'rb') as f:
            assert hdf5.Reader.read(packed, 'train', record.index) == f.read()
    with hdf5.open_file(packed) as f:
        assert f.attrs['format'] == hdf5.FORMAT
        assert f.attrs['source'] == os.path.abspath(tiny_dataset)
        assert set(f["train"]) == {hdf5.ENCODED, *hdf5.COLUMNS}
    assert hdf5.count(packed, 'train') == 29 and hdf5.count(packed, 'val') == 0


def test_pack_refuses_to_overwrite_and_leaves_no_partial_file(tiny_dataset, packed):
    before = os.path.getmtime(packed)
    with pytest.raises(FileExistsError, match='refusing to overwrite'):
        hdf5.pack(tiny_dataset, packed)
    assert os.path.getmtime(packed) == before
    proc = subprocess.run([sys.executable, '-m', 'sizeshape_datasets', 'pack', tiny_dataset,
                           '--out', packed], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {packed!r} already exists; refusing to overwrite it"


def test_pack_of_a_corrupt_dataset_writes_nothing(tmp_path):
    data = make_dataset(tmp_path / 'mame')
    victim = image_path(data, 4)
    content = open(victim, 'rb').read()
    open(victim, 'wb').write(content[:len(content) // 2])
    with pytest.raises(mame.DatasetError, match='truncated JPEG'):
        hdf5.pack(data, str(tmp_path / 'out.h5'))
    assert sorted(os.listdir(tmp_path)) == ['mame']


def test_pack_command_and_describe(tiny_dataset, tmp_path):
    out = tmp_path / 'sub dir' / 'packed.h5'
    proc = subprocess.run([sys.executable, '-m', 'sizeshape_datasets', 'pack', tiny_dataset,
                           '--out', str(out)], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)['images'] == {'train': 29}
    proc = subprocess.run([sys.executable, '-m', 'sizeshape_datasets', 'describe', str(out)],
                          capture_output=True, text=True, cwd=REPO)
    assert json.loads(proc.stdout)['images'] == 29


def write_h5(path, **attrs):
    with h5py.File(path, 'w') as f:
        f.attrs.update(attrs)
        return path


@pytest.mark.parametrize('make, message', [
    (lambda p: p, "HDF5 file '{p}' does not exist"),
    (lambda p: open(p, 'w').write('not hdf5') and p, "'{p}' is a file but not an HDF5 file"),
    (lambda p: write_h5(p), "'{p}' is an HDF5 file but not one made by"),
    (lambda p: write_h5(p, format=hdf5.FORMAT), "'{p}' has no 'train' images"),
])
def test_reader_errors(tmp_path, make, message):
    path = str(tmp_path / 'data.h5')
    make(path)
    with pytest.raises(mame.DatasetError) as err:
        hdf5.read_hdf5(path)
    assert message.format(p=path) in str(err.value)


def test_missing_datasets_are_named(tmp_path):
    path = str(tmp_path / 'data.h5')
    with h5py.File(path, 'w') as f:
        f.attrs['format'] = hdf5.FORMAT
        f.attrs['class_names'] = ['a']
        f.create_dataset('train/label', data=np.zeros(2, np.int32))
        f.create_dataset('train/width', data=np.ones(2, np.int32))
    with pytest.raises(mame.DatasetError, match=r"lacks the datasets \['jpeg', 'height', 'file'\]"):
        hdf5.read_hdf5(path)
    line = payload_error(run_payload('--variant', 'lrfs', '--data-dir', path))
    assert line.startswith(f"error: {path!r}: subset 'train' lacks the datasets")


def test_payload_names_a_file_that_is_not_hdf5(tmp_path):
    path = tmp_path / 'notes.txt'
    path.write_text('hello')
    line = payload_error(run_payload('--variant', 'hrvs', '--data-dir', path))
    assert line.startswith(f"error: '{path}' is a file but not an HDF5 file")


@pytest.mark.parametrize('make', [
    lambda r: ('lrfs', dict(image_size=64, crop_size=56, batch_size=8, seed=0)),
    lambda r: ('hrvs', dict(budget=4000, batching='padded', batch_size=4, seed=0)),
    lambda r: ('hrvs', dict(budget=4000, batching='bucketed', batch_size=4, seed=0)),
])
def test_jpeg_and_hdf5_give_identical_training_input(tiny_dataset, packed, make):
    import keras

    from payload import data
    outputs = []
    for source in (tiny_dataset, packed):
        records, _ = hdf5.read_dataset(source)
        variant, kwargs = make(records)
        keras.utils.set_random_seed(0)
        dataset = (data.lrfs_dataset if variant == 'lrfs' else data.hrvs_dataset)(records, **kwargs)
        outputs.append([[t.numpy() for t in batch] for _ in range(2) for batch in dataset])
    jpeg, packed_out = outputs
    assert len(jpeg) == len(packed_out) > 0
    for a, b in zip(jpeg, packed_out):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


def test_payload_trains_on_hdf5_like_on_jpeg(tiny_dataset, packed):
    args = ['--variant', 'lrfs', '--epochs', '2', '--batch-size', '8', '--image-size', '64',
            '--crop-size', '56', '--peak-gflops', '100']
    jpeg, h5 = (run_payload('--data-dir', d, *args) for d in (tiny_dataset, packed))
    jpeg_summary, h5_summary = summary_of(jpeg), summary_of(h5)
    assert (jpeg_summary['data_format'], h5_summary['data_format']) == ('jpeg', 'hdf5')
    assert h5_summary['dataset'] == packed
    for key in ('dataset_images', 'images_per_epoch', 'steps_per_epoch', 'distinct_shapes',
                'traced_graphs', 'classes', 'gflops_per_epoch'):
        assert jpeg_summary[key] == h5_summary[key], key
    for a, b in zip(epochs_of(jpeg), epochs_of(h5)):
        assert (a['images'], a['pixels'], a['steps']) == (b['images'], b['pixels'], b['steps'])
        assert a['loss'] == pytest.approx(b['loss'], rel=1e-5)     # same input, same seed
