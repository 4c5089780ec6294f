"""The summary of a run (SSB-SUMMARY) from its epochs: steady state, per-shape costs,
energy, validation and time to accuracy, and the pixels trained. No TensorFlow."""
import statistics


def per_shape_costs(epochs, steady, jit_compile):
    """What a new input shape costs, from the steps that met one, each timed on its own.

    - ``trace_seconds_per_shape``: their time minus their steady cost, over the new
      shapes; the steady cost of a step is taken proportional to the pixels it
      processes (the steady epoch time over the pixels a steady epoch processes);
    - ``graph_build_seconds_per_shape``: the tracing part alone (Python and graph
      building), timed apart before each such step;
    - ``compile_seconds``: with XLA, the rest of their excess in all (compilation);
      None without XLA, where the rest is graph optimisation and kernel set-up.
    """
    count = sum(e['new_shapes'] for e in epochs)
    if not count:
        return {'trace_seconds_per_shape': None, 'graph_build_seconds_per_shape': None,
                'compile_seconds': None}
    per_pixel = steady / max(epochs[0]['processed_pixels'], 1)
    excess = sum(e['new_shape_steps_s'] - per_pixel * e['new_shape_pixels'] for e in epochs)
    build = sum(e['new_shape_graph_build_s'] for e in epochs)
    return {'trace_seconds_per_shape': excess / count,
            'graph_build_seconds_per_shape': build / count,
            'compile_seconds': excess - build if jit_compile else None}


def cv(values):
    """Coefficient of variation (sample standard deviation over the mean); None for fewer
    than two values."""
    values = list(values)
    if len(values) < 2:
        return None
    return statistics.stdev(values) / statistics.mean(values)


def steady_state(epochs, seen_shapes, step):
    """Steady state is the median of the epochs after the first, which pays for tracing;
    each steady figure comes with its spread over those epochs (``*_cv``)."""
    first = epochs[0]
    steady_epochs = epochs[1:]
    steady = statistics.median(e['seconds'] for e in steady_epochs)
    device_peaks = [e['device_peak_bytes'] for e in epochs if e['device_peak_bytes'] is not None]
    total_seconds = sum(e['seconds'] for e in epochs)
    return {
        'epochs': len(epochs),
        'steps_per_epoch': first['steps'],
        'images_per_epoch': first['images'],
        'first_epoch_s': first['seconds'],
        'steady_epoch_s': steady,
        'first_epoch_overhead_s': first['seconds'] - steady,
        'steady_epochs': len(steady_epochs),
        'steady_epoch_cv': cv(e['seconds'] for e in steady_epochs),
        'images_per_s': first['images'] / steady,
        'images_per_s_cv': cv(e['images_per_s'] for e in steady_epochs),
        'mpx_per_s': first['pixels'] / steady / 1e6,
        'mpx_per_s_cv': cv(e['mpx_per_s'] for e in steady_epochs),
        'padded_fraction': first['padded_fraction'],
        'gflops_per_epoch': first['gflops'],
        'gflops_per_s': statistics.median(e['gflops_per_s'] for e in epochs[1:]),
        'distinct_shapes': len(seen_shapes),
        'traced_graphs': step.traces,
        'input_wait_s': sum(e['input_wait_s'] for e in epochs),
        'input_wait_fraction': sum(e['input_wait_s'] for e in epochs) / total_seconds,
        'first_loss': first['loss'],
        'final_loss': epochs[-1]['loss'],
        'device_peak_bytes': max(device_peaks) if device_peaks else None,
        'host_peak_rss_bytes': max(e['host_peak_rss_bytes'] for e in epochs),
        **per_shape_costs(epochs, steady, step.jit_compile),
        **energy_summary(epochs, first['images']),
    }


def energy_summary(epochs, images_per_epoch):
    """Medians of the steady epochs' energy; None where no counter was read."""
    measured = [e for e in epochs[1:] if e.get('energy_j') is not None]
    if not measured:
        return {'energy_per_epoch_j': None, 'energy_per_image_j': None, 'mean_power_w': None}
    per_epoch = statistics.median(e['energy_j'] for e in measured)
    return {'energy_per_epoch_j': per_epoch, 'energy_per_image_j': per_epoch / images_per_epoch,
            'mean_power_w': statistics.median(e['mean_power_w'] for e in measured)}


def validation(val_subset, epochs, evaluation, clock):
    """Validation and time-to-accuracy fields; None where the run did not validate."""
    if evaluation is None:
        return {'validate': False, 'val_subset': None, 'val_images': None,
                'val_images_left_out': None, 'val_loss': None, 'val_accuracy': None,
                'val_seconds': None, 'val_traced_graphs': None, **clock.summary()}
    return {'validate': True, 'val_subset': val_subset,
            'val_images': epochs[-1]['val_images'],
            'val_images_left_out': evaluation.images_left_out,
            'val_loss': epochs[-1]['val_loss'], 'val_accuracy': epochs[-1]['val_accuracy'],
            'val_seconds': sum(e['val_seconds'] for e in epochs),
            'val_traced_graphs': evaluation.traces, **clock.summary()}


def trained_pixels(batches, shard):
    """(mean, max) pixels per trained image, from the planned shapes (padding excluded)."""
    from payload import data
    if batches.variant == 'lrfs':
        return batches.crop_size ** 2, batches.crop_size ** 2
    pixels = [h * w for h, w in data.hrvs_targets(shard, batches.budget, batches.upscale)]
    return sum(pixels) / len(pixels), max(pixels)
