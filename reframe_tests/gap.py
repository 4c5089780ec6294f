"""The paper's finding as tested numbers: HR&VS against LR&FS on one partition.

``SizeShapeGap`` runs after the LR&FS and HR&VS ``TrainingTest`` runs of the same model,
device and scale (ReFrame dependencies, same environment) and reports their ratios,
HR&VS over LR&FS, as performance variables with references from the same per-system
YAML files (README.md, "What the gap means"). An upgrade that slows HR&VS training
while LR&FS keeps its speed moves the ratios, and fails this test, even where each
variant's own references are too wide to notice.
"""
import os

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.udeps as udeps
from reframe.core.builtins import (
    parameter,
    run_after,
    run_before,
    sanity_function,
    variable,
)
from reframe.core.exceptions import PerformanceError

from ssb_contract import perf
from ssb_contract.options import MODELS, VARIANT_LABELS, VARIANTS, workload_fields
from payload.summarise import cv
from ssb_references.judge import stats

from . import checked, payload_log, references, scaling, site_keys
from .in_image import InImage
from .training import TrainingTest
from .workload import Workload

# Each ratio, HR&VS's figure over LR&FS's: the TrainingTest variable that logs the figure
# (its SSB-SUMMARY key is the contract's), and what a rise and a fall of the ratio mean.
RATIOS = {
    'hrvs_lrfs_time_per_mpx': ('pixel_throughput', ('HR&VS slowed', 'HR&VS sped up')),
    'hrvs_lrfs_host_memory': ('host_peak_memory', ('HR&VS needs more host memory',
                                                   'HR&VS needs less host memory')),
    'hrvs_lrfs_device_memory': ('device_peak_memory', ('HR&VS needs more device memory',
                                                       'HR&VS needs less device memory')),
    'hrvs_lrfs_first_epoch_overhead': ('first_epoch_overhead', ("HR&VS's first epoch costs more",
                                                                "HR&VS's first epoch costs less")),
    'hrvs_lrfs_gflops': ('achieved_gflops', ('HR&VS computes faster', 'HR&VS computes slower')),
}
# Which code the compared runs come from: the same in both.
VERSIONS = ('tensorflow_version', 'payload_version', 'suite_version')
# Where the compared runs ran (in_image.py): the same image and runtime in both.
CONTAINER = ('container_image', 'container_image_digest', 'container_runtime',
             'container_detected')
# Time per megapixel is the inverse of the pixel rates: LR&FS's over HR&VS's.
INVERSE = {'hrvs_lrfs_time_per_mpx'}
# Ratios of rates that every steady epoch measures: each comes with an interval.
PER_EPOCH = {'hrvs_lrfs_time_per_mpx', 'hrvs_lrfs_gflops'}


def what_moved(partition, perfvalues, variant_perfvalues):
    """Which way each failed ratio moved, with both variants' own figures against their
    references (which both met: ReFrame runs the gap only after both passed).

    ``perfvalues`` are the gap test's and ``variant_perfvalues`` each variant's run's
    (``{variant: perfvalues}``), as ReFrame keeps them: ``'<partition>:<variable>'`` ->
    (value, reference, lower, upper, unit, result).
    """
    said = []
    for key, (value, ref, *_, result) in perfvalues.items():
        name = key.split(':')[-1]
        if result != 'fail':
            continue
        # An interval bound with a hand-written reference moves as its ratio does.
        training_var, (rise, fall) = RATIOS[perf.BY_NAME[name].spread_of or name]
        change = f' ({value / ref - 1:+.0%})' if ref else ''
        sides = []
        for v in VARIANTS:
            if f'{partition}:{training_var}' in variant_perfvalues[v]:
                got, vref, *_, unit, _ = variant_perfvalues[v][f'{partition}:{training_var}']
                against = f'reference {vref:.4g}' if vref else 'no reference'
                sides.append(f'{VARIANT_LABELS[v]} {got:.4g} {unit} ({against})')
        said.append(f'{name} {value:.3g}, reference {ref:.3g}{change}: '
                    f'{rise if value > ref else fall} relative to LR&FS on {partition}'
                    + (f'; {training_var}: {", ".join(sides)}' if sides else ''))
    return '; '.join(said)


@rfm.simple_test
class SizeShapeGap(rfm.RunOnlyRegressionTest, Workload, InImage, special=True):
    """HR&VS over LR&FS: time per megapixel, peak memory, first-epoch overhead, GFLOP/s."""

    # special=True: ReFrame's check_performance is extended to say which variant moved.

    model = parameter(list(MODELS))
    device = parameter([site_keys.CPU, site_keys.GPU])
    scale = parameter(list(scaling.SCALES))
    # Of the intervals of the per-epoch ratios (docs/metrics.md, "What the gap means").
    confidence = variable(checked.Float, value=stats.GAP_CONFIDENCE)
    local = True                 # reads the two runs' outputs; runs nothing itself
    runs_payload = False         # its container fields are its runs'
    executable = 'true'
    time_limit = '5m'

    @run_after('init')
    def pair_the_runs(self):
        self.tags.add('gap')
        nums = {v: TrainingTest.get_variant_nums(variant=v, model=self.model, device=self.device,
                                                 scale=self.scale) for v in VARIANTS}
        self.skip_if(any(len(n) != 1 for n in nums.values()),
                     'TrainingTest has parameters added with -P: the gap pairs one LR&FS run '
                     'with one HR&VS run')
        self.training = {v: TrainingTest.variant_name(n[0]) for v, n in nums.items()}
        for name in self.training.values():
            self.depends_on(name, udeps.by_env)

    def stdout_of(self, variant):
        run = self.getdep(self.training[variant])
        return os.path.join(run.stagedir, run.job.stdout)

    def summary_of(self, variant):
        return sn.evaluate(payload_log.summary(self.stdout_of(variant)))

    def steady_epochs_of(self, variant):
        """Worker 0's epochs after the first: the ones its steady figures are medians of."""
        return [r for r in sn.evaluate(payload_log.epochs(self.stdout_of(variant)))
                if r.get('worker', 0) == 0 and r['epoch'] >= 2]

    @sanity_function
    def both_ran(self):
        # ReFrame runs this test only once both dependencies passed their own sanity.
        return sn.assert_true(all(self.summary_of(v)['epochs'] for v in VARIANTS))

    @run_before('performance')
    def set_perf_variables(self):
        if self.is_dry_run():
            return
        summaries = {v: self.summary_of(v) for v in VARIANTS}
        epochs = {v: self.steady_epochs_of(v) for v in VARIANTS}
        limit = references.noise_limit(self)
        self.too_noisy = []
        values = {}
        for var in perf.perf_vars('SizeShapeGap'):
            if var.only == 'gpu' and self.device != site_keys.GPU or var.spread_of:
                continue
            key = perf.BY_NAME[RATIOS[var.name][0]].key
            num, den = ('lrfs', 'hrvs') if var.name in INVERSE else ('hrvs', 'lrfs')
            if var.name not in PER_EPOCH:
                values[var.name] = summaries[num][key] / summaries[den][key]
                continue
            # The ratio of the steady epochs' rates, with its interval (judge/stats.py).
            samples = {v: [e[key] for e in epochs[v]] for v in VARIANTS}
            interval = stats.ratio_interval(samples[num], samples[den], self.confidence)
            self.too_noisy += self.noise_of(var.name, RATIOS[var.name][0], samples, limit,
                                            interval)
            if interval is None:          # logged, and the test fails saying why
                values[var.name] = summaries[num][key] / summaries[den][key]
            else:
                values.update({var.name: interval.centre, f'{var.name}_low': interval.low,
                               f'{var.name}_high': interval.high})
        self.perf_variables = {
            name: sn.make_performance_function(sn.defer(value), perf.BY_NAME[name].unit)
            for name, value in values.items()}

    @staticmethod
    def noise_of(name, training_var, samples, limit, interval):
        """Why ``name`` means nothing: too few steady epochs, or inputs noisier than the
        system's limit (its references file's ``noise_limit_cv``); [] when it means something."""
        if interval is None:
            counts = ', '.join(f'{VARIANT_LABELS[v]} {len(s)}' for v, s in samples.items())
            return [f'{name}: no interval without 2 steady epochs per variant ({counts}): '
                    f'run 3 epochs or more']
        said = []
        for variant, sample in samples.items():
            spread = cv(sample)
            if spread > limit:
                said.append(f'{name} is too noisy to mean anything: '
                            f'{VARIANT_LABELS[variant]} {training_var} varies by CV '
                            f'{spread:.3g} over its {len(sample)} steady epochs, above the '
                            f'limit {limit:.3g} (noise_limit_cv of the references file); its '
                            f'{stats.percent(interval.confidence)} interval is '
                            f'[{interval.low:.3g}, {interval.high:.3g}]')
        return said

    def check_performance(self):
        """ReFrame's check, then a failure for inputs too noisy for a ratio to mean anything,
        after the values are logged."""
        noisy = [] if self.is_dry_run() else self.too_noisy
        try:
            super().check_performance()
        except PerformanceError as err:
            runs = {v: self.getdep(self.training[v]).perfvalues for v in VARIANTS}
            moved = what_moved(self.current_partition.fullname, self.perfvalues, runs)
            raise PerformanceError('; '.join(noisy + [f'{moved}; {err}'])) from None
        if noisy:
            raise PerformanceError('; '.join(noisy))

    @run_before('run')
    def copy_workload(self):
        """The compared runs' workload and versions, before the references are chosen by
        them: each variant's fields from its own run, the shared ones from both, which must
        agree (``-S TrainingTest.x=...`` sets them for the two runs and not for this test)."""
        runs = {v: self.getdep(self.training[v]) for v in VARIANTS}
        own = {v: workload_fields(v) + VERSIONS + CONTAINER for v in VARIANTS}
        shared = [name for name in own['lrfs'] if name in own['hrvs']]
        differ = [f'{name}: LR&FS {getattr(runs["lrfs"], name)!r}, HR&VS '
                  f'{getattr(runs["hrvs"], name)!r}' for name in shared
                  if getattr(runs['lrfs'], name) != getattr(runs['hrvs'], name)]
        if differ:
            raise checked.VariableError('the gap compares runs of one workload; these '
                                        'differ: ' + '; '.join(differ))
        for variant, run in runs.items():
            for name in own[variant]:
                setattr(self, name, getattr(run, name))
