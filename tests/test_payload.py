"""The payload as users run it: ``python -m payload ...`` in a subprocess, real TensorFlow."""
import json
import os
import shutil

import pytest

from conftest import make_dataset, payload_error, run_payload


def records(proc, tag):
    return [json.loads(line.split(' ', 1)[1]) for line in proc.stdout.splitlines()
            if line.startswith(tag + ' ')]


def train(data_dir, *args):
    proc = run_payload('--data-dir', data_dir, *args)
    assert proc.returncode == 0, proc.stderr
    epochs, (summary,) = records(proc, 'SSB-EPOCH'), records(proc, 'SSB-SUMMARY')
    return epochs, summary


EPOCH_FIELDS = {'epoch', 'seconds', 'images', 'pixels', 'images_per_s', 'mpx_per_s', 'loss',
                'device_peak_bytes', 'host_peak_rss_bytes', 'input_wait_s', 'steps',
                'new_shapes', 'traces', 'padded_fraction'}
SUMMARY_FIELDS = {'steady_epoch_s', 'first_epoch_s', 'first_epoch_overhead_s', 'distinct_shapes',
                  'traced_graphs', 'input_wait_s', 'versions', 'devices', 'device_peak_bytes',
                  'host_peak_rss_bytes', 'images_per_s', 'mpx_per_s', 'variant', 'model',
                  'batch_size', 'dataset', 'device_memory'}


def test_lrfs_run_reports_every_field(tiny_dataset):
    epochs, summary = train(tiny_dataset, '--variant', 'lrfs', '--epochs', '3',
                            '--batch-size', '8', '--image-size', '64', '--crop-size', '56')
    assert [e['epoch'] for e in epochs] == [1, 2, 3]
    for e in epochs:
        assert EPOCH_FIELDS <= set(e)
        assert e['images'] == 29 and e['steps'] == 4
        assert e['pixels'] == 29 * 56 * 56
        assert e['seconds'] > 0 and e['host_peak_rss_bytes'] > 50 * 2**20
    assert SUMMARY_FIELDS <= set(summary)
    assert summary['distinct_shapes'] == 2              # full batches of 8 and the last of 5
    assert summary['traced_graphs'] == 2
    assert summary['device_peak_bytes'] is None and 'not measured' in summary['device_memory']
    assert summary['steady_epoch_s'] == sorted(e['seconds'] for e in epochs[1:])[0] or \
        summary['steady_epoch_s'] > 0
    assert summary['first_epoch_s'] == epochs[0]['seconds']
    assert summary['versions']['tensorflow']


def test_hrvs_keeps_shapes_and_retraces_per_shape(tiny_dataset):
    epochs, summary = train(tiny_dataset, '--variant', 'hrvs', '--epochs', '2',
                            '--pixel-budget', '4k')
    assert summary['batch_size'] == 1
    assert summary['distinct_shapes'] > 20             # shapes kept, not resized to one
    assert summary['traced_graphs'] == summary['distinct_shapes']
    assert epochs[0]['traces'] == summary['traced_graphs'] and epochs[1]['traces'] == 0
    assert epochs[0]['pixels'] <= 29 * 4000
    assert summary['first_epoch_overhead_s'] > 0


@pytest.mark.parametrize('batching', ['padded', 'bucketed'])
def test_hrvs_batching_strategies(tiny_dataset, batching):
    epochs, summary = train(tiny_dataset, '--variant', 'hrvs', '--epochs', '2',
                            '--pixel-budget', '4k', '--batch-size', '4',
                            '--hrvs-batching', batching)
    assert epochs[0]['images'] == 29
    assert 0 < summary['padded_fraction'] < 1
    if batching == 'bucketed':
        assert summary['distinct_shapes'] < 20


def test_reduced_retracing_bounds_graphs(tiny_dataset):
    _, summary = train(tiny_dataset, '--variant', 'hrvs', '--epochs', '2',
                       '--pixel-budget', '4k', '--retracing', 'reduced')
    assert summary['traced_graphs'] < summary['distinct_shapes']


def test_loss_falls(tmp_path):
    data = make_dataset(tmp_path / 'mame', images_per_class=4)
    epochs, _ = train(data, '--variant', 'lrfs', '--epochs', '6', '--batch-size', '16',
                      '--image-size', '64', '--crop-size', '56', '--learning-rate', '3e-3')
    assert epochs[-1]['loss'] < 0.9 * epochs[0]['loss']


def test_data_path_with_spaces(tiny_dataset, tmp_path):
    spaced = tmp_path / 'my data dir' / 'MAMe copy'
    shutil.copytree(tiny_dataset, spaced)
    _, summary = train(spaced, '--variant', 'hrvs', '--epochs', '2', '--pixel-budget', '2k')
    assert summary['dataset'] == str(spaced)


@pytest.mark.parametrize('args, message', [
    (['--model', 'alexnet'], "unknown model 'alexnet'"),
    (['--batch-size', '0'], '--batch-size must be >= 1, got 0'),
    (['--batch-size', '-4'], '--batch-size must be >= 1, got -4'),
    (['--epochs', '1'], '--epochs must be >= 2'),
    (['--variant', 'hrvs', '--batch-size', '4'], 'single trains at batch 1'),
    (['--variant', 'hrvs', '--pixel-budget', 'lots'], "pixel budget 'lots' is not a number"),
    (['--variant', 'square'], "argument --variant: invalid choice: 'square'"),
])
def test_bad_options(tiny_dataset, args, message):
    base = ['--variant', 'lrfs', '--data-dir', tiny_dataset]
    line = payload_error(run_payload(*base, *args))
    assert message in line


def test_missing_and_empty_data_dir(tmp_path):
    line = payload_error(run_payload('--variant', 'lrfs', '--data-dir', tmp_path / 'nowhere'))
    assert line == f"error: data directory '{tmp_path / 'nowhere'}' does not exist"
    line = payload_error(run_payload('--variant', 'lrfs', '--data-dir', tmp_path))
    assert line == f"error: data directory '{tmp_path}' is empty"


def test_truncated_jpeg(tmp_path):
    data = make_dataset(tmp_path / 'mame')
    victim = os.path.join(data, 'data', '3.jpg')
    content = open(victim, 'rb').read()
    open(victim, 'wb').write(content[:len(content) // 3])
    line = payload_error(run_payload('--variant', 'hrvs', '--data-dir', data))
    assert line == f"error: corrupt image '{victim}': truncated JPEG (no end-of-image marker)"


def test_image_too_large_for_memory_limit_names_its_shape(tiny_dataset):
    proc = run_payload('--variant', 'hrvs', '--data-dir', tiny_dataset, '--pixel-budget',
                       'native', '--memory-limit-gib', '0.001')
    line = payload_error(proc)
    assert 'over the memory limit of 0.00 GiB' in line
    assert line.startswith("error: image '") and ' px, trained as ' in line
    assert not records(proc, 'SSB-EPOCH')                # refused before any training
