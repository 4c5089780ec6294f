"""Which way is better for each performance variable, and the floor under its tolerance.

The threshold rule (docs/references.md, "The threshold rule"):

- centre: the median of the selected runs;
- tolerance ``t`` (a fraction of the median) = the largest of
  ``rel_floor``, ``abs_floor / |median|`` and ``SPREAD_FACTOR`` x the largest
  relative distance of a run from the median;
- throughput variables are images (pixels) per steady epoch second: their
  tolerance is the one of ``steady_epoch_time`` translated, ``t_s / (1 + t_s)``
  (at least their floor), so that the rate fails when the time does;
- only the worse side is bounded (``lower``: times and memory may not grow by
  more than ``t``; ``higher``: throughputs may not drop by more than ``t``);
  counts (``exact``) are bounded on both sides. Improvements are not failures:
  ``ssb-references drift`` reports them, so that the references get updated.

Time-to-accuracy variables are centred as MLPerf Training scores runs: the
fastest and the slowest run dropped, the mean of the rest (``--tta-aggregate
median`` for the median instead).
"""
import statistics
from dataclasses import dataclass
from typing import Optional

#: Multiplier of the observed spread (max |run - median| / median).
SPREAD_FACTOR = 3.0


@dataclass(frozen=True)
class Policy:
    better: str               # 'lower', 'higher' or 'exact'
    rel_floor: float          # smallest tolerance, a fraction of the reference
    abs_floor: float = 0.0    # smallest tolerance, in the variable's unit
    follows: Optional[str] = None   # at least the translated tolerance of this time
    why: str = ''
    time_to_accuracy: bool = False  # centred as --tta-aggregate says (MLPerf by default)


POLICIES = {
    'steady_epoch_time': Policy('lower', 0.10, 0.05,
                                why='timer and scheduler noise on sub-second epochs'),
    'first_epoch_time': Policy('lower', 0.15, 0.25,
                               why='tracing and compilation vary more than steady epochs'),
    'first_epoch_overhead': Policy('lower', 0.20, 0.25,
                                   why='a difference of two times: noisier than either'),
    'throughput': Policy('higher', 0.10, follows='steady_epoch_time',
                         why='images / steady epoch time'),
    'pixel_throughput': Policy('higher', 0.10, follows='steady_epoch_time',
                               why='pixels / steady epoch time'),
    'achieved_gflops': Policy('higher', 0.10, follows='steady_epoch_time',
                              why='training FLOPs / steady epoch time'),
    'peak_fraction': Policy('higher', 0.25, 0.05,
                            why='over a peak that is measured in the job unless the site sets it'),
    'padded_fraction': Policy('lower', 0.0, 0.05,
                              why='fixed by the data, the seed and the batching: absolute'),
    'host_peak_memory': Policy('lower', 0.05, 64.0,
                               why='allocator and library versions move peak RSS a little'),
    'device_peak_memory': Policy('lower', 0.05, 64.0,
                                 why='allocator rounding'),
    'input_wait_fraction': Policy('lower', 0.25, 0.05,
                                  why='a small fraction: judged in absolute terms'),
    'parallel_efficiency': Policy('higher', 0.10, 0.05,
                                  why='throughput per device vs the single run: two noisy runs'),
    'input_throughput': Policy('higher', 0.15,
                               why='the input pipeline drained alone for a few seconds'),
    'stage_time': Policy('lower', 0.25, 0.5,
                         why='a copy between file systems that other jobs share'),
    'stage_bandwidth': Policy('higher', 0.25, follows='stage_time',
                              why='bytes / stage time'),
    'prepare_time': Policy('lower', 0.15, 0.25,
                           why='decoding and resizing on the job\'s CPUs'),
    'prepare_throughput': Policy('higher', 0.15, follows='prepare_time',
                                 why='images / prepare time'),
    'pixels_per_image': Policy('exact', 0.0, 0.5,
                               why='fixed by the data and the pixel budget'),
    'trace_seconds_per_shape': Policy('lower', 0.20, 0.05,
                                      why='the excess of a few first steps over their steady cost'),
    'compile_seconds': Policy('lower', 0.20, 0.25,
                              why='XLA compilation of every new shape, in all'),
    'energy_per_epoch': Policy('lower', 0.15,
                               why='power x steady epoch time: the noise of both'),
    'energy_per_image': Policy('lower', 0.15, why='energy per epoch / images'),
    'mean_power': Policy('lower', 0.10, why='the counters\' and the load\'s variation'),
    # TimeToAccuracy: MLPerf Training's scoring over runs (aggregate below).
    'seconds_to_target': Policy('lower', 0.20, 1.0, time_to_accuracy=True,
                                why='epochs to target times epoch time: both vary'),
    'epochs_to_target': Policy('lower', 0.0, 1.0, time_to_accuracy=True,
                               why='one epoch more is within the seeds\' and threads\' noise'),
    'val_accuracy': Policy('higher', 0.0, 0.05,
                           why='the accuracy that reached the target: noisy on a small subset'),
    'validation_time': Policy('lower', 0.25, 0.25,
                              why='a few short evaluations, tracing included'),
    # SizeShapeGap: HR&VS over LR&FS of one partition, model and scale.
    'hrvs_lrfs_time_per_mpx': Policy('lower', 0.15,
                                     why='a ratio of two steady epoch times: the noise of both'),
    'hrvs_lrfs_host_memory': Policy('lower', 0.05, 0.05, why='a ratio of two peak RSS'),
    'hrvs_lrfs_device_memory': Policy('lower', 0.05, 0.05, why='a ratio of two device peaks'),
    'hrvs_lrfs_first_epoch_overhead': Policy('lower', 0.25,
                                             why='a ratio of two differences of times'),
    'hrvs_lrfs_gflops': Policy('higher', 0.15, why='a ratio of two rates'),
    'distinct_shapes': Policy('exact', 0.0, 0.5,
                              why='a count fixed by the data: must match'),
    'traced_graphs': Policy('exact', 0.0, 0.5,
                            why='a count fixed by the data and the retracing policy'),
}

#: Shown side by side (LR&FS vs HR&VS) and as trends by ``report``.
REPORT_VARIABLES = ['steady_epoch_time', 'pixel_throughput', 'host_peak_memory',
                    'device_peak_memory']

LABELS = {
    'steady_epoch_time': 'steady epoch time',
    'first_epoch_time': 'first epoch time',
    'first_epoch_overhead': 'first epoch overhead',
    'throughput': 'throughput',
    'pixel_throughput': 'pixel throughput',
    'host_peak_memory': 'host peak memory',
    'device_peak_memory': 'device peak memory',
    'input_wait_fraction': 'input wait',
    'input_throughput': 'input throughput',
    'stage_time': 'stage time',
    'stage_bandwidth': 'stage bandwidth',
    'prepare_time': 'prepare time',
    'prepare_throughput': 'prepare throughput',
    'pixels_per_image': 'pixels per image',
    'parallel_efficiency': 'parallel efficiency',
    'trace_seconds_per_shape': 'seconds per new shape',
    'compile_seconds': 'XLA compile seconds',
    'seconds_to_target': 'seconds to target accuracy',
    'epochs_to_target': 'epochs to target accuracy',
    'val_accuracy': 'validation accuracy',
    'validation_time': 'validation time',
    'distinct_shapes': 'distinct shapes',
    'traced_graphs': 'traced graphs',
}


def policy(name):
    """The variable's policy, or None for a variable nobody has decided about yet."""
    return POLICIES.get(name)


#: How ``--tta-aggregate`` can combine the runs of a time-to-accuracy variable.
TTA_AGGREGATES = ('mlperf', 'median')


class TooFewRuns(ValueError):
    pass


def centre(name, values, tta_aggregate='mlperf'):
    """The value that stands for several runs: their median; for time-to-accuracy
    variables with ``tta_aggregate='mlperf'``, the mean after dropping the fastest
    and the slowest run (MLPerf Training), which needs at least 3 runs."""
    pol = policy(name)
    if pol is not None and pol.time_to_accuracy and tta_aggregate == 'mlperf':
        if len(values) < 3:
            raise TooFewRuns(f'{name}: MLPerf aggregation drops the fastest and the slowest '
                             f'run and needs at least 3, got {len(values)}')
        kept = sorted(values)[1:-1]
        return sum(kept) / len(kept)
    return statistics.median(values)
