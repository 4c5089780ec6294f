"""End to end: ``reframe -c reframe_tests -r`` on ReFrame's builtin generic system."""
import glob
import importlib.metadata
import os
import re

import pytest
import tensorflow as tf

import payload
from conftest import image_path, make_dataset, make_quirky_root
from reframe_runs import read_perflog, run_reframe


def test_default_run_logs_both_variants(default_run):
    cwd, proc = default_run
    (perflog,) = glob.glob(os.path.join(cwd, 'perflogs', 'generic', 'default', 'TrainingTest.log'))
    records = {r['variant']: r for r in read_perflog(perflog)}
    assert set(records) == {'lrfs', 'hrvs'}
    for variant, r in records.items():
        assert r['result'] == 'pass'
        assert r['model'] == 'smallcnn'
        assert r['tensorflow_version'] == tf.__version__
        assert r['dataset'].startswith('synthetic-mame images_per_class=8 ')
        # Each steady figure with its spread over the 5 steady epochs.
        for var in ('steady_epoch_time_cv', 'throughput_cv', 'pixel_throughput_cv'):
            assert 0 < float(r[f'{var}_value']) < 0.5 and r[f'{var}_unit'] == 'fraction'
        for var in ('steady_epoch_time', 'first_epoch_time', 'throughput',
                    'pixel_throughput', 'host_peak_memory'):
            assert float(r[f'{var}_value']) > 0, (variant, var)
        assert r['host_peak_memory_unit'] == 'MiB'
        assert float(r['host_peak_memory_value']) > 100
    assert records['lrfs']['batch_size'] == '16' and records['hrvs']['batch_size'] == '1'
    # HR&VS keeps every shape: one traced graph per image shape, shown, not averaged away.
    assert float(records['hrvs']['distinct_shapes_value']) > 20
    assert float(records['lrfs']['distinct_shapes_value']) == 1       # fixed shape: one
    # Like for like: HR&VS images carry at least the pixels of LR&FS's crops.
    assert (float(records['hrvs']['pixels_per_image_value'])
            >= float(records['lrfs']['pixels_per_image_value']) == 224 * 224)
    for r in records.values():
        assert float(r['input_throughput_value']) > 0 and r['input_throughput_unit'] == 'img/s'
        assert 'prepare_time_value' not in r and 'stage_time_value' not in r   # not asked for
        # Which code and data the result comes from.
        assert r['payload_version'] == payload.PAYLOAD_VERSION
        assert r['suite_version'] == importlib.metadata.version('size-shape-bench')
        assert re.fullmatch(r'sha256:[0-9a-f]{64}', r['dataset_fingerprint'])
        assert re.fullmatch(r'[0-9a-f]{40}(-dirty)?|none', r['git_revision'])
        assert float(r['trace_seconds_per_shape_value']) > 0
    # the data, 2 single-scale runs and their gap, 2 time-to-accuracy runs; the other scales
    # (and their gaps) skip
    assert 'Ran 6/18 test case(s)' in proc.stdout


def test_default_run_times_one_payload_at_a_time(default_run):
    """ReFrame's asynchronous policy starts the four payload runs together: all but one wait
    for the host, and the wait is logged apart from every timed figure."""
    cwd, _ = default_run
    waits = [float(r['timing_lock_wait_s'])
             for test in ('TrainingTest', 'TimeToAccuracy')
             for r in read_perflog(os.path.join(cwd, 'perflogs', 'generic', 'default',
                                                f'{test}.log'))]
    assert len(waits) == 4 and sum(w > 1 for w in waits) >= 2, waits


def test_default_run_gives_the_gap_the_right_way_up_with_its_interval(default_run):
    cwd, _ = default_run
    (gap,) = read_perflog(os.path.join(cwd, 'perflogs', 'generic', 'default',
                                       'SizeShapeGap.log'))
    assert gap['result'] == 'pass'
    low, value, high = (float(gap[f'hrvs_lrfs_time_per_mpx{s}_value'])
                        for s in ('_low', '', '_high'))
    assert 1.2 < low < value < high, (low, value, high)     # HR&VS costs more per pixel
    assert float(gap['hrvs_lrfs_gflops_low_value']) < float(gap['hrvs_lrfs_gflops_value'])


def test_default_run_reaches_the_target_accuracy(default_run):
    cwd, proc = default_run
    (perflog,) = glob.glob(os.path.join(cwd, 'perflogs', 'generic', 'default',
                                        'TimeToAccuracy.log'))
    records = {r['variant']: r for r in read_perflog(perflog)}
    assert set(records) == {'lrfs', 'hrvs'}
    for r in records.values():
        assert r['result'] == 'pass' and r['target_accuracy'] == '0.5'
        epochs = float(r['epochs_to_target_value'])
        assert 1 <= epochs <= 15 and r['epochs_to_target_unit'] == 'epochs'
        assert float(r['seconds_to_target_value']) > 0
        curve = [float(a) for a in r['val_accuracy_curve'].split(',')]
        assert len(curve) == max(2, epochs) and curve[int(epochs) - 1] >= 0.5
        assert abs(float(r['val_accuracy_value']) - curve[-1]) < 1e-4      # the last epoch's
        times = [float(t) for t in r['val_time_curve'].split(',')]
        assert times == sorted(times) and len(times) == len(curve)
        assert r['payload_version'] == payload.PAYLOAD_VERSION


@pytest.fixture(scope='module')
def broken_dataset(tmp_path_factory):
    root = make_dataset(tmp_path_factory.mktemp('broken') / 'mame')
    victim = image_path(root, 5)
    data = open(victim, 'rb').read()
    open(victim, 'wb').write(data[:len(data) // 2])
    return root, victim


def expect_failure(cwd, *args):
    proc = run_reframe('-r', *args, cwd=cwd)
    assert proc.returncode != 0
    reasons = [line for line in proc.stdout.splitlines() if '* Reason:' in line]
    assert reasons, proc.stdout[-3000:]
    return reasons


def test_missing_data_dir_fails_with_payload_error(tmp_path):
    missing = tmp_path / 'no such dir'
    (reason,) = expect_failure(tmp_path, '-n', 'TrainingTest.*variant=lrfs',
                               '-S', f'data_dir={missing}')
    assert f"payload failed: error: data directory '{missing}' does not exist" in reason


def test_corrupt_jpeg_fails_with_payload_error(tmp_path, broken_dataset):
    root, victim = broken_dataset
    (reason,) = expect_failure(tmp_path, '-n', 'TrainingTest.*variant=hrvs',
                               '-S', f'data_dir={root}')
    assert (f"payload failed: error: {root}/MAMe_dataset.csv:7: corrupt image '{victim}': "
            "truncated JPEG") in reason


def test_bad_batch_size_is_refused_at_set_up(tmp_path):
    # Before the payload starts: the test's variables are checked at set-up (checked.py).
    (reason,) = expect_failure(tmp_path, '-n', 'TrainingTest.*variant=lrfs',
                               '-S', 'lrfs_batch_size=0')
    assert 'variable error: -S lrfs_batch_size=0 must be at least 1' in reason


def test_image_over_memory_limit_fails_with_its_shape(tmp_path):
    (reason,) = expect_failure(tmp_path, '-n', 'TrainingTest.*variant=hrvs',
                               '-S', 'pixel_budget=native',
                               '-S', 'memory_limit_gib=0.001')
    assert 'payload failed: error: image ' in reason and 'over the memory limit' in reason
    assert ' px, trained as ' in reason


def test_published_quirks_prepared_and_staged_from_a_path_with_spaces(tmp_path):
    """The published metadata's quirks (a 179.6 Mpx image among them) through ReFrame, from
    a path with spaces, staged to a local directory and prepared at training resolution,
    each timed."""
    root = make_quirky_root(tmp_path / 'data with spaces' / 'mame')
    scratch = tmp_path / 'scratch'
    scratch.mkdir()
    proc = run_reframe('-r', '-n', 'TrainingTest.*variant=hrvs', '-S', f'data_dir={root}',
                       '-S', 'prepare=true',
                       '-S', f'stage_dir={scratch}', cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:]
    (perflog,) = glob.glob(os.path.join(tmp_path, 'perflogs', '*', '*', 'TrainingTest.log'))
    (record,) = read_perflog(perflog)
    assert record['result'] == 'pass' and record['prepare'] == 'true'
    assert record['dataset'] == root
    for var, unit in (('stage_time', 's'), ('stage_bandwidth', 'GB/s'), ('prepare_time', 's'),
                      ('prepare_throughput', 'img/s')):
        assert float(record[f'{var}_value']) > 0 and record[f'{var}_unit'] == unit
    assert os.listdir(scratch) == []
