"""payload/summarise.py: the run's summary from its epoch records, each figure checked against
a computation of its own (numpy) on epochs whose numbers are chosen by hand."""
import types

import numpy as np
import pytest

from payload import summarise
from sizeshape_datasets import mame


def epoch(seconds, **changed):
    """One run_epoch record: 20 images, 4 steps, 20,000 pixels (30,000 processed)."""
    record = {'seconds': seconds, 'steps': 4, 'images': 20, 'pixels': 20000,
              'images_per_s': 20 / seconds, 'mpx_per_s': 20000 / seconds / 1e6,
              'padded_fraction': 1 / 3, 'gflops': 6.0, 'gflops_per_s': 6.0 / seconds,
              'input_wait_s': 0.1, 'loss': 3.0, 'device_peak_bytes': None,
              'host_peak_rss_bytes': 500, 'new_shapes': 0, 'new_shape_steps_s': 0.0,
              'new_shape_graph_build_s': 0.0, 'new_shape_pixels': 0,
              'processed_pixels': 30000}
    record.update(changed)
    return record


def step(traces=3, jit_compile=False):
    return types.SimpleNamespace(traces=traces, jit_compile=jit_compile)


def numpy_cv(values):
    return np.std(values, ddof=1) / np.mean(values)


SECONDS = [5.0, 2.0, 2.6, 2.2]          # the first pays for tracing; the steady median is 2.2


def test_cv_is_the_sample_coefficient_of_variation():
    values = [2.0, 2.6, 2.2, 3.1]
    assert summarise.cv(values) == pytest.approx(numpy_cv(values), rel=1e-12)
    assert summarise.cv(iter(values)) == pytest.approx(numpy_cv(values), rel=1e-12)
    assert summarise.cv([4.0, 4.0]) == 0
    assert summarise.cv([4.0]) is None and summarise.cv([]) is None


def test_steady_state_is_the_median_of_the_epochs_after_the_first():
    epochs = [epoch(s, loss=loss, input_wait_s=wait, host_peak_rss_bytes=rss)
              for s, loss, wait, rss in zip(SECONDS, [3.3, 2.0, 1.5, 1.2], [1.0, 0.1, 0.2, 0.3],
                                            [100, 400, 300, 200])]
    epochs[2]['device_peak_bytes'] = 7000
    epochs[3]['device_peak_bytes'] = 9000
    s = summarise.steady_state(epochs, {(1, 8, 8), (1, 9, 9)}, step(traces=5))
    steady = np.median(SECONDS[1:])
    assert steady == 2.2
    assert s['epochs'] == 4 and s['steady_epochs'] == 3
    assert s['steps_per_epoch'] == 4 and s['images_per_epoch'] == 20
    assert s['first_epoch_s'] == 5.0 and s['steady_epoch_s'] == steady
    assert s['first_epoch_overhead_s'] == pytest.approx(5.0 - steady)
    assert s['steady_epoch_cv'] == pytest.approx(numpy_cv(SECONDS[1:]))
    assert s['images_per_s'] == pytest.approx(20 / steady)
    assert s['images_per_s_cv'] == pytest.approx(numpy_cv([20 / x for x in SECONDS[1:]]))
    assert s['mpx_per_s'] == pytest.approx(20000 / steady / 1e6)
    assert s['gflops_per_epoch'] == 6.0
    assert s['gflops_per_s'] == pytest.approx(np.median([6.0 / x for x in SECONDS[1:]]))
    assert s['padded_fraction'] == pytest.approx(1 / 3)
    assert s['distinct_shapes'] == 2 and s['traced_graphs'] == 5
    assert s['input_wait_s'] == pytest.approx(1.6)
    assert s['input_wait_fraction'] == pytest.approx(1.6 / sum(SECONDS))
    assert (s['first_loss'], s['final_loss']) == (3.3, 1.2)
    assert s['device_peak_bytes'] == 9000 and s['host_peak_rss_bytes'] == 400
    assert s['energy_per_epoch_j'] is None


def test_two_epochs_have_one_steady_epoch_and_no_spread():
    s = summarise.steady_state([epoch(4.0), epoch(2.0)], set(), step())
    assert s['steady_epoch_s'] == 2.0 and s['steady_epochs'] == 1
    assert s['steady_epoch_cv'] is None and s['images_per_s_cv'] is None
    assert s['device_peak_bytes'] is None


def test_per_shape_costs_take_the_steady_share_of_new_shape_steps_out():
    epochs = [epoch(5.0, new_shapes=3, new_shape_steps_s=1.5, new_shape_pixels=3000,
                    new_shape_graph_build_s=0.6),
              epoch(2.2, new_shapes=1, new_shape_steps_s=0.4, new_shape_pixels=1000,
                    new_shape_graph_build_s=0.1)]
    per_pixel = 2.2 / 30000                # steady time over the pixels an epoch processes
    excess = (1.5 - per_pixel * 3000) + (0.4 - per_pixel * 1000)
    costs = summarise.per_shape_costs(epochs, 2.2, jit_compile=True)
    assert costs['trace_seconds_per_shape'] == pytest.approx(excess / 4)
    assert costs['graph_build_seconds_per_shape'] == pytest.approx(0.7 / 4)
    assert costs['compile_seconds'] == pytest.approx(excess - 0.7)
    assert summarise.per_shape_costs(epochs, 2.2, jit_compile=False)['compile_seconds'] is None
    # ... and steady_state reports them with its own steady time.
    s = summarise.steady_state(epochs, set(), step(jit_compile=True))
    assert s['trace_seconds_per_shape'] == pytest.approx(excess / 4)


def test_per_shape_costs_without_new_shapes_are_none():
    assert summarise.per_shape_costs([epoch(1.0), epoch(1.0)], 1.0, True) == {
        'trace_seconds_per_shape': None, 'graph_build_seconds_per_shape': None,
        'compile_seconds': None}


def test_per_shape_costs_of_an_epoch_that_processed_nothing_do_not_divide_by_zero():
    epochs = [epoch(1.0, processed_pixels=0, new_shapes=1, new_shape_steps_s=0.5,
                    new_shape_pixels=0)]
    assert summarise.per_shape_costs(epochs, 1.0, False)['trace_seconds_per_shape'] == 0.5


def test_energy_is_the_median_of_the_steady_epochs_that_read_a_counter():
    epochs = [epoch(5.0, energy_j=999.0, mean_power_w=999.0),      # first: not steady
              epoch(2.0, energy_j=100.0, mean_power_w=50.0),
              epoch(2.0, energy_j=None),
              epoch(2.0, energy_j=130.0, mean_power_w=65.0),
              epoch(2.0, energy_j=110.0, mean_power_w=55.0)]
    e = summarise.energy_summary(epochs, images_per_epoch=20)
    assert e == {'energy_per_epoch_j': 110.0, 'energy_per_image_j': pytest.approx(5.5),
                 'mean_power_w': 55.0}
    assert summarise.energy_summary([epoch(5.0, energy_j=9.0), epoch(2.0)], 20) == {
        'energy_per_epoch_j': None, 'energy_per_image_j': None, 'mean_power_w': None}


def test_validation_fields_and_time_to_accuracy():
    from payload.accuracy import TargetClock
    clock = TargetClock(0.5)
    for n, accuracy, elapsed in ((1, 0.3, 10.0), (2, 0.55, 20.0), (3, 0.52, 30.0)):
        clock.reached(n, accuracy, elapsed)
    epochs = [epoch(5.0, val_images=40, val_loss=2.0, val_accuracy=0.3, val_seconds=1.0),
              epoch(2.0, val_images=40, val_loss=1.5, val_accuracy=0.55, val_seconds=0.5),
              epoch(2.0, val_images=40, val_loss=1.6, val_accuracy=0.52, val_seconds=0.25)]
    evaluation = types.SimpleNamespace(images_left_out=2, traces=4)
    v = summarise.validation('val', epochs, evaluation, clock)
    assert v == {'validate': True, 'val_subset': 'val', 'val_images': 40,
                 'val_images_left_out': 2, 'val_loss': 1.6, 'val_accuracy': 0.52,
                 'val_seconds': 1.75, 'val_traced_graphs': 4, 'target_accuracy': 0.5,
                 'target_reached': True, 'epochs_to_target': 2, 'seconds_to_target': 20.0,
                 'best_val_accuracy': 0.55, 'best_val_epoch': 2}
    none = summarise.validation('val', epochs, None, TargetClock(None))
    assert none['validate'] is False and none['target_reached'] is False
    assert all(none[k] is None for k in ('val_subset', 'val_images', 'val_images_left_out',
                                         'val_loss', 'val_accuracy', 'val_seconds',
                                         'val_traced_graphs', 'epochs_to_target'))


def test_trained_pixels_of_lrfs_are_the_crop():
    batches = types.SimpleNamespace(variant='lrfs', crop_size=56)
    assert summarise.trained_pixels(batches, []) == (56 * 56, 56 * 56)


@pytest.mark.parametrize('upscale', [True, False])
def test_trained_pixels_of_hrvs_follow_the_budget(upscale):
    shard = [mame.ImageRecord('a.jpg', 0, 400, 300), mame.ImageRecord('b.jpg', 1, 30, 50),
             mame.ImageRecord('c.jpg', 2, 1000, 10)]
    batches = types.SimpleNamespace(variant='hrvs', budget=4000, upscale=upscale)

    def budget(w, h):                     # aspect ratio kept, sides rounded down
        if not upscale and w * h <= 4000:
            return w * h
        f = np.sqrt(4000 / (w * h))
        return max(1, int(h * f)) * max(1, int(w * f))
    expected = [budget(r.width, r.height) for r in shard]
    assert expected[0] == 54 * 73 and expected[1] == (1500 if not upscale else 81 * 48)
    mean, largest = summarise.trained_pixels(batches, shard)
    assert mean == pytest.approx(np.mean(expected)) and largest == max(expected)
