"""The payload as users run it: ``python -m payload ...`` in a subprocess, real TensorFlow."""
import json
import os
import re
import statistics
import subprocess
import sys

import pytest

from conftest import (HRVS_RUN, LRFS_RUN, REPO, image_path, make_dataset, make_quirky_root,
                      payload_error, payload_records, run_payload, train)
from payload import PAYLOAD_VERSION


EPOCH_FIELDS = {'epoch', 'seconds', 'images', 'pixels', 'images_per_s', 'mpx_per_s', 'loss',
                'device_peak_bytes', 'host_peak_rss_bytes', 'input_wait_s', 'steps',
                'new_shapes', 'traces', 'padded_fraction'}
SUMMARY_FIELDS = {'steady_epoch_s', 'first_epoch_s', 'first_epoch_overhead_s', 'distinct_shapes',
                  'traced_graphs', 'input_wait_s', 'versions', 'devices', 'device_peak_bytes',
                  'host_peak_rss_bytes', 'images_per_s', 'mpx_per_s', 'variant', 'model',
                  'batch_size', 'dataset', 'device_memory', 'input_images_per_s', 'input_bound',
                  'mean_pixels_per_image', 'max_pixels_per_image', 'images_left_out',
                  'stage_s', 'stage_gb_per_s', 'prepare_s', 'prepare_images_per_s'}


def test_lrfs_run_reports_every_field(lrfs_run):
    epochs, summary = lrfs_run
    assert [e['epoch'] for e in epochs] == [1, 2, 3]
    for e in epochs:
        assert EPOCH_FIELDS <= set(e)
        assert e['images'] == 24 and e['steps'] == 3     # full batches only
        assert e['pixels'] == 24 * 56 * 56
        assert e['seconds'] > 0 and e['host_peak_rss_bytes'] > 50 * 2**20
    assert SUMMARY_FIELDS <= set(summary)
    assert summary['images_left_out'] == 5               # the partial batch
    assert summary['distinct_shapes'] == 1              # fixed shape: one shape, one graph
    assert summary['traced_graphs'] == 1
    assert summary['mean_pixels_per_image'] == summary['max_pixels_per_image'] == 56 * 56
    assert summary['input_images_per_s'] > 0 and summary['input_bound'] in (True, False)
    assert summary['device_peak_bytes'] is None and 'not measured' in summary['device_memory']
    # Steady state: the median of the epochs after the first, and the rates from it.
    steady = statistics.median(e['seconds'] for e in epochs[1:])
    assert summary['steady_epoch_s'] == pytest.approx(steady, rel=1e-12)
    assert summary['first_epoch_s'] == epochs[0]['seconds']
    assert summary['first_epoch_overhead_s'] == pytest.approx(epochs[0]['seconds'] - steady)
    assert summary['images_per_s'] == pytest.approx(24 / steady)
    assert summary['mpx_per_s'] == pytest.approx(24 * 56 * 56 / steady / 1e6)
    assert summary['versions']['payload'] == PAYLOAD_VERSION
    assert re.fullmatch(r'\d+\.\d+\.\d+\S*', summary['versions']['tensorflow'])


def test_hrvs_keeps_shapes_and_retraces_per_shape(hrvs_run):
    epochs, summary = hrvs_run
    assert summary['batch_size'] == 1
    assert summary['distinct_shapes'] > 20             # shapes kept, not resized to one
    assert summary['traced_graphs'] == summary['distinct_shapes']
    assert epochs[0]['traces'] == summary['traced_graphs'] and epochs[1]['traces'] == 0
    assert epochs[0]['pixels'] <= 29 * 8000
    assert summary['first_epoch_overhead_s'] > 0


def test_reduced_retracing_bounds_graphs(tiny_dataset):
    _, summary = train(tiny_dataset, '--variant', 'hrvs', '--epochs', '2',
                       '--pixel-budget', '4k', '--retracing', 'reduced')
    assert summary['traced_graphs'] < summary['distinct_shapes']


def test_loss_falls(tmp_path):
    data = make_dataset(tmp_path / 'mame', images_per_class=4)
    epochs, _ = train(data, '--variant', 'lrfs', '--epochs', '6', '--batch-size', '16',
                      '--image-size', '64', '--crop-size', '56', '--learning-rate', '3e-3')
    assert epochs[-1]['loss'] < 0.9 * epochs[0]['loss']


def test_data_path_with_spaces(hrvs_run, spaced_dataset):
    _, summary = hrvs_run
    assert summary['dataset'] == str(spaced_dataset)


@pytest.mark.parametrize('args, message', [
    (['--model', 'alexnet'], "argument --model: invalid choice: 'alexnet'"),
    (['--batch-size', '0'], '--batch-size 0 must be at least 1'),
    (['--batch-size', '-4'], '--batch-size -4 must be at least 1'),
    (['--epochs', '1'], '--epochs 1 must be at least 2: steady-state time is the median'),
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
    victim = image_path(data, 3)
    content = open(victim, 'rb').read()
    open(victim, 'wb').write(content[:len(content) // 3])
    line = payload_error(run_payload('--variant', 'hrvs', '--data-dir', data))
    assert line == (f"error: {data}/MAMe_dataset.csv:5: corrupt image '{victim}': truncated JPEG "
                    "(no end-of-image marker)")          # the row, then the file


def test_image_too_large_for_memory_limit_names_its_shape(tiny_dataset):
    proc = run_payload('--variant', 'hrvs', '--data-dir', tiny_dataset, '--pixel-budget',
                       'native', '--memory-limit-gib', '0.001')
    line = payload_error(proc)
    assert 'over the memory limit of 0.00 GiB' in line
    assert line.startswith("error: image '") and ' px, trained as ' in line
    assert not payload_records(proc, 'SSB-EPOCH')                # refused before any training


def test_hrvs_resizes_every_image_to_the_budget(hrvs_run, spaced_dataset):
    _, summary = hrvs_run
    assert 0.97 * 8000 < summary['mean_pixels_per_image'] <= summary['max_pixels_per_image'] <= 8000
    assert summary['upscale'] is True
    _, native = train(spaced_dataset, *HRVS_RUN, '--no-upscale')
    assert native['mean_pixels_per_image'] < summary['mean_pixels_per_image']


def test_trains_on_the_published_quirks(tmp_path):
    """A MAMe layout with the published file's quirks, including a 179.6 Mpx JPEG above
    Pillow's limit, trains in both variants (DCT-scaled decoding keeps it cheap)."""
    root = make_quirky_root(tmp_path / 'mame')
    epochs, summary = train(root, '--variant', 'hrvs', '--epochs', '2')
    assert epochs[0]['images'] == 3 and summary['max_pixels_per_image'] <= 65_000
    epochs, _ = train(root, '--variant', 'lrfs', '--epochs', '2', '--batch-size', '3')
    assert epochs[0]['images'] == 3


@pytest.mark.parametrize('run', ['hrvs_run', 'lrfs_run'])
def test_prepared_and_staged_input_trains_like_the_files(request, tmp_path, run):
    epochs, files = request.getfixturevalue(run)        # the same run from the files
    args = HRVS_RUN if run == 'hrvs_run' else LRFS_RUN
    scratch = tmp_path / 'local'
    scratch.mkdir()
    epochs_p, prepared = train(files['dataset'], *args, '--prepare', '--stage-dir', scratch)
    assert prepared['data_format'] == 'prepared'
    assert prepared['stage_s'] > 0 and prepared['stage_bytes'] > 0
    assert prepared['prepare_s'] > 0 and prepared['prepare_images_per_s'] > 0
    assert os.listdir(scratch) == []                     # the copies are removed
    # Same images, shapes and order; pixels differ by the uint8 rounding of prepared data.
    assert [e['images'] for e in epochs_p] == [e['images'] for e in epochs]
    assert prepared['distinct_shapes'] == files['distinct_shapes']
    assert abs(prepared['first_loss'] - files['first_loss']) < 1e-3


def test_prepare_command_and_resolution_check(tiny_dataset, tmp_path):
    out = tmp_path / 'hrvs-8k.h5'
    proc = subprocess.run([sys.executable, '-m', 'sizeshape_datasets', 'prepare', tiny_dataset,
                           '--variant', 'hrvs', '--pixel-budget', '8k', '--subsets', 'train',
                           '--out', out], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    done = json.loads(proc.stdout)
    assert done['images'] == 29 and done['prepared']['pixel_budget'] == 8000
    _, summary = train(out, '--variant', 'hrvs', '--epochs', '2', '--pixel-budget', '8k')
    assert summary['data_format'] == 'prepared' and summary['max_pixels_per_image'] <= 8000
    line = payload_error(run_payload('--variant', 'hrvs', '--data-dir', out,
                                     '--pixel-budget', '65k'))
    assert line.endswith("was prepared for pixel_budget=8000, upscale=True, variant=hrvs; this "
                         "run asks for pixel_budget=65000, upscale=True, variant=hrvs: prepare "
                         "it again, or change the options")
    line = payload_error(run_payload('--variant', 'lrfs', '--data-dir', out))
    assert 'was prepared for' in line


@pytest.mark.parametrize('args, message', [
    (['--variant', 'lrfs', '--batch-size', '30'],
     '29 images over 1 worker(s) do not fill one LR&FS batch of 30; lower --batch-size'),
    (['--variant', 'hrvs', '--stage-dir', '/nonexistent/scratch'],
     "stage directory '/nonexistent/scratch' does not exist or is not a directory"),
    (['--variant', 'hrvs', '--input-probe-seconds', '-1'], '--input-probe-seconds must be >= 0'),
])
def test_more_bad_options(tiny_dataset, args, message):
    assert payload_error(run_payload('--data-dir', tiny_dataset, *args)) == f'error: {message}'
