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

from ssb_contract import perf

#: Multiplier of the observed spread (max |run - median| / median).
SPREAD_FACTOR = 3.0

#: Shown side by side (LR&FS vs HR&VS) and as trends by ``report``.
REPORT_VARIABLES = ['steady_epoch_time', 'pixel_throughput', 'host_peak_memory',
                    'device_peak_memory']


def policy(name):
    """The variable's policy (which way is better, its floors, what it follows: one home,
    ssb_contract/perf.py), or None for a variable nobody has decided about yet."""
    return perf.BY_NAME.get(name)


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
