"""Validation and time to accuracy in the payload: real training on learnable synthetic data."""
import pytest

from conftest import make_dataset, payload_error, payload_records as records, run_payload, train

SMALL = ['--variant', 'lrfs', '--batch-size', '8', '--image-size', '64', '--crop-size', '56',
         '--progress-seconds', '0', '--input-probe-seconds', '0']


@pytest.fixture(scope='module')
def learnable(tmp_path_factory):
    """4 classes, 8 training and 2 validation images each: smallcnn reaches 75% in a few epochs."""
    return make_dataset(tmp_path_factory.mktemp('tta') / 'mame', images_per_class=8,
                        val_per_class=2, num_classes=4, scale=0.03)


def test_stops_at_the_epoch_that_reached_the_target(learnable):
    epochs, summary = train(learnable, *SMALL, '--epochs', '15', '--target-accuracy', '0.75')
    reached = summary['epochs_to_target']
    assert summary['target_reached'] and 2 <= reached < 15
    assert [e['epoch'] for e in epochs] == list(range(1, reached + 1))     # stopped there
    accuracies = [e['val_accuracy'] for e in epochs]
    assert accuracies[-1] >= 0.75 > max(accuracies[:-1])
    for e in epochs:
        assert e['val_images'] == 8 and e['val_seconds'] > 0 and e['val_loss'] > 0
    # From the first touch of the data to the end of the evaluation that reached it:
    # every epoch's training and evaluation, and nothing of the model's set-up.
    work = sum(e['seconds'] + e['val_seconds'] for e in epochs)
    assert work <= summary['seconds_to_target'] == epochs[-1]['elapsed_s']
    assert summary['seconds_to_target'] < work + 5
    assert summary['val_accuracy'] == accuracies[-1] == summary['best_val_accuracy']
    assert summary['val_subset'] == 'val' and summary['val_images_left_out'] == 0
    # Epoch times stay training only.
    assert summary['first_epoch_s'] == epochs[0]['seconds']


def test_a_target_met_by_the_first_epoch_still_trains_two(learnable):
    epochs, summary = train(learnable, *SMALL, '--epochs', '5', '--target-accuracy', '0.01')
    assert summary['epochs_to_target'] == 1 and summary['epochs'] == 2
    assert summary['seconds_to_target'] == epochs[0]['elapsed_s'] < epochs[1]['elapsed_s']
    assert summary['steady_epoch_s'] == epochs[1]['seconds']


def test_unreached_target_fails_after_the_summary(learnable):
    proc = run_payload('--data-dir', learnable, *SMALL, '--epochs', '2',
                       '--target-accuracy', '1', '--learning-rate', '0')
    line = payload_error(proc)
    assert 'target accuracy 1 not reached in 2 epochs (best val accuracy' in line
    assert 'raise --epochs or lower --target-accuracy' in line
    (summary,) = records(proc, 'SSB-SUMMARY')       # the numbers are not lost
    assert summary['target_reached'] is False and summary['epochs_to_target'] is None
    assert len(records(proc, 'SSB-EPOCH')) == 2


def test_validate_alone_runs_every_epoch(learnable):
    epochs, summary = train(learnable, *SMALL, '--epochs', '3', '--validate')
    assert len(epochs) == 3 and all(0 <= e['val_accuracy'] <= 1 for e in epochs)
    assert summary['validate'] and summary['target_accuracy'] is None
    assert summary['seconds_to_target'] is None and summary['best_val_accuracy'] is not None
    assert summary['val_traced_graphs'] == 1       # fixed shape, one full batch


def test_no_validation_by_default(lrfs_run):
    epochs, summary = lrfs_run                  # the payload tests' run, without --validate
    assert 'val_accuracy' not in epochs[0] and summary['validate'] is False
    assert summary['val_accuracy'] is None and summary['target_reached'] is False


@pytest.mark.parametrize('args, message', [
    (['--target-accuracy', '0'], '--target-accuracy 0.0 must be a finite number above 0 and at '
                                 'most 1'),
    (['--target-accuracy', '1.5'], '--target-accuracy 1.5 must be a finite number above 0 and '
                                   'at most 1'),
    (['--validate', '--subset', 'val'], '--validate evaluates on the subset it trains on (val)'),
    (['--validate', '--val-subset', 'test'], "no 'test' images"),
])
def test_bad_validation_options(learnable, args, message):
    line = payload_error(run_payload('--data-dir', learnable, *SMALL, *args))
    assert message in line
