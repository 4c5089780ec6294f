"""The performance variables: every one the tests log, with the summary key it is read from,
its unit, which way is better and the floors of its reference tolerance (docs/references.md,
"The threshold rule"); docs/metrics.md and docs/references.md are checked against this table
by tests/test_contract.py.
"""
from dataclasses import dataclass
from typing import Optional

MIB = 1 / 2**20
# The largest coefficient of variation of a gap ratio's inputs over their steady epochs for
# which the ratio still means something; a system's references file may set its own
# (``noise_limit_cv``, docs/references.md).
NOISE_LIMIT_CV = 0.25


@dataclass(frozen=True)
class PerfVar:
    name: str                 # the ReFrame performance variable
    unit: str
    better: str               # 'lower', 'higher' or 'exact' (a count: both sides bounded)
    rel_floor: float          # smallest tolerance, a fraction of the reference
    abs_floor: float = 0.0    # smallest tolerance, in the unit
    why: str = ''
    test: str = 'TrainingTest'
    key: Optional[str] = None     # SSB-SUMMARY key it is read from; None: computed by the test
    scale: float = 1.0            # unit conversion of the summary value
    only: Optional[str] = None    # logged only in runs that: stage, prepare, jit, energy, gpu,
                                  # spread (had 2 steady epochs or more)
    follows: Optional[str] = None  # a rate of this time: at least its translated tolerance
    time_to_accuracy: bool = False  # centred as MLPerf scores runs (ssb-references)
    # The spread (CV) or an interval bound of this variable: reported, never referenced or
    # judged on its own (it moves with the noise of a few epochs).
    spread_of: Optional[str] = None
    label: str = ''

    @property
    def title(self):
        return self.label or self.name.replace('_', ' ')


PERF_VARS = (
    PerfVar('steady_epoch_time', 's', 'lower', 0.10, 0.05, key='steady_epoch_s',
            why='timer and scheduler noise on sub-second epochs'),
    PerfVar('first_epoch_time', 's', 'lower', 0.15, 0.25, key='first_epoch_s',
            why='tracing and compilation vary more than steady epochs'),
    PerfVar('first_epoch_overhead', 's', 'lower', 0.20, 0.25, key='first_epoch_overhead_s',
            why='a difference of two times: noisier than either'),
    PerfVar('throughput', 'img/s', 'higher', 0.10, key='images_per_s',
            follows='steady_epoch_time', why='images / steady epoch time'),
    PerfVar('pixel_throughput', 'Mpx/s', 'higher', 0.10, key='mpx_per_s',
            follows='steady_epoch_time', why='pixels / steady epoch time'),
    # Each steady figure's spread over the steady epochs it is the median of.
    PerfVar('steady_epoch_time_cv', 'fraction', 'lower', 0.0, spread_of='steady_epoch_time',
            key='steady_epoch_cv', only='spread',
            why='its spread', label='steady epoch time CV'),
    PerfVar('throughput_cv', 'fraction', 'lower', 0.0, spread_of='throughput',
            key='images_per_s_cv', only='spread',
            why='its spread', label='throughput CV'),
    PerfVar('pixel_throughput_cv', 'fraction', 'lower', 0.0, spread_of='pixel_throughput',
            key='mpx_per_s_cv', only='spread',
            why='its spread', label='pixel throughput CV'),
    PerfVar('host_peak_memory', 'MiB', 'lower', 0.05, 64.0, key='host_peak_rss_bytes',
            scale=MIB, why='allocator and library versions move peak RSS a little'),
    PerfVar('input_wait_fraction', 'fraction', 'lower', 0.25, 0.05, key='input_wait_fraction',
            why='a small fraction: judged in absolute terms', label='input wait'),
    PerfVar('distinct_shapes', 'shapes', 'exact', 0.0, 0.5, key='distinct_shapes',
            why='a count fixed by the data: must match'),
    PerfVar('traced_graphs', 'graphs', 'exact', 0.0, 0.5, key='traced_graphs',
            why='a count fixed by the data and the retracing policy'),
    PerfVar('trace_seconds_per_shape', 's', 'lower', 0.20, 0.05, key='trace_seconds_per_shape',
            why='the excess of a few first steps over their steady cost',
            label='seconds per new shape'),
    PerfVar('padded_fraction', 'fraction', 'lower', 0.0, 0.05, key='padded_fraction',
            why='fixed by the data, the seed and the batching: absolute'),
    PerfVar('achieved_gflops', 'GFLOP/s', 'higher', 0.10, key='gflops_per_s',
            follows='steady_epoch_time', why='training FLOPs / steady epoch time'),
    PerfVar('peak_fraction', 'fraction', 'higher', 0.25, 0.05, key='peak_fraction',
            why='over a peak that is measured in the job unless the site sets it'),
    PerfVar('pixels_per_image', 'px', 'exact', 0.0, 0.5, key='mean_pixels_per_image',
            why='fixed by the data and the pixel budget'),
    PerfVar('input_throughput', 'img/s', 'higher', 0.15, key='input_images_per_s',
            why='the input pipeline drained alone for a few seconds'),
    PerfVar('stage_time', 's', 'lower', 0.25, 0.5, key='stage_s', only='stage',
            why='a copy between file systems that other jobs share'),
    PerfVar('stage_bandwidth', 'GB/s', 'higher', 0.25, key='stage_gb_per_s', only='stage',
            follows='stage_time', why='bytes / stage time'),
    PerfVar('compile_seconds', 's', 'lower', 0.20, 0.25, key='compile_seconds', only='jit',
            why='XLA compilation of every new shape, in all', label='XLA compile seconds'),
    PerfVar('energy_per_epoch', 'J', 'lower', 0.15, key='energy_per_epoch_j', only='energy',
            why='power x steady epoch time: the noise of both'),
    PerfVar('energy_per_image', 'J/img', 'lower', 0.15, key='energy_per_image_j',
            only='energy', why='energy per epoch / images'),
    PerfVar('mean_power', 'W', 'lower', 0.10, key='mean_power_w', only='energy',
            why='the counters\' and the load\'s variation'),
    PerfVar('prepare_time', 's', 'lower', 0.15, 0.25, key='prepare_s', only='prepare',
            why='decoding and resizing on the job\'s CPUs'),
    PerfVar('prepare_throughput', 'img/s', 'higher', 0.15, key='prepare_images_per_s',
            only='prepare', follows='prepare_time', why='images / prepare time'),
    PerfVar('device_peak_memory', 'MiB', 'lower', 0.05, 64.0, key='device_peak_bytes',
            scale=MIB, only='gpu', why='allocator rounding'),
    PerfVar('parallel_efficiency', 'fraction', 'higher', 0.10, 0.05,
            why='throughput per device vs the single run: two noisy runs'),
    # SizeShapeGap: HR&VS over LR&FS of one partition, model and scale.
    PerfVar('hrvs_lrfs_time_per_mpx', 'ratio', 'lower', 0.15, test='SizeShapeGap',
            why='a ratio of two steady epoch times: the noise of both'),
    PerfVar('hrvs_lrfs_time_per_mpx_low', 'ratio', 'lower', 0.0, test='SizeShapeGap',
            spread_of='hrvs_lrfs_time_per_mpx', why='the lower bound of its interval'),
    PerfVar('hrvs_lrfs_time_per_mpx_high', 'ratio', 'lower', 0.0, test='SizeShapeGap',
            spread_of='hrvs_lrfs_time_per_mpx', why='the upper bound of its interval'),
    PerfVar('hrvs_lrfs_host_memory', 'ratio', 'lower', 0.05, 0.05, test='SizeShapeGap',
            why='a ratio of two peak RSS'),
    PerfVar('hrvs_lrfs_device_memory', 'ratio', 'lower', 0.05, 0.05, test='SizeShapeGap',
            only='gpu', why='a ratio of two device peaks'),
    PerfVar('hrvs_lrfs_first_epoch_overhead', 'ratio', 'lower', 0.25, test='SizeShapeGap',
            why='a ratio of two differences of times'),
    PerfVar('hrvs_lrfs_gflops', 'ratio', 'higher', 0.15, test='SizeShapeGap',
            why='a ratio of two rates'),
    PerfVar('hrvs_lrfs_gflops_low', 'ratio', 'higher', 0.0, test='SizeShapeGap',
            spread_of='hrvs_lrfs_gflops', why='the lower bound of its interval'),
    PerfVar('hrvs_lrfs_gflops_high', 'ratio', 'higher', 0.0, test='SizeShapeGap',
            spread_of='hrvs_lrfs_gflops', why='the upper bound of its interval'),
    # TimeToAccuracy (and, from TrainingTest's rows, its training figures).
    PerfVar('seconds_to_target', 's', 'lower', 0.20, 1.0, test='TimeToAccuracy',
            key='seconds_to_target', time_to_accuracy=True,
            why='epochs to target times epoch time: both vary',
            label='seconds to target accuracy'),
    PerfVar('epochs_to_target', 'epochs', 'lower', 0.0, 1.0, test='TimeToAccuracy',
            key='epochs_to_target', time_to_accuracy=True,
            why='one epoch more is within the seeds\' and threads\' noise',
            label='epochs to target accuracy'),
    PerfVar('val_accuracy', 'fraction', 'higher', 0.0, 0.05, test='TimeToAccuracy',
            key='val_accuracy', label='validation accuracy',
            why='the accuracy that reached the target: noisy on a small subset'),
    PerfVar('validation_time', 's', 'lower', 0.25, 0.25, test='TimeToAccuracy',
            key='val_seconds', why='a few short evaluations, tracing included'),
)
BY_NAME = {v.name: v for v in PERF_VARS}
# TimeToAccuracy logs these TrainingTest variables too: its training, apart from evaluation.
TTA_TRAINING_VARS = ('steady_epoch_time', 'first_epoch_time', 'throughput',
                     'host_peak_memory', 'device_peak_memory')


def perf_vars(test):
    return [v for v in PERF_VARS if v.test == test]
