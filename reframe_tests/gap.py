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
import reframe.utility.typecheck as typ
import reframe.utility.udeps as udeps
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable

from payload.contract import MODELS, VARIANTS

from . import payload_log, references, scaling, site_keys
from .training import TrainingTest


@rfm.simple_test
class SizeShapeGap(rfm.RunOnlyRegressionTest):
    """HR&VS over LR&FS: time per megapixel, peak memory, first-epoch overhead, GFLOP/s."""

    model = parameter(list(MODELS))
    device = parameter([site_keys.CPU, site_keys.GPU])
    scale = parameter(list(scaling.SCALES))
    models = variable(typ.List[str], value=['smallcnn'])     # as TrainingTest's
    # Copied from the HR&VS run, for the perflog and the references' workload check.
    dataset = variable(str, value='')
    subset = variable(str, value='')
    epochs = variable(int, value=0)
    pixel_budget = variable(str, value='')
    training_step = variable(str, value='')
    precision = variable(str, value='')
    jit_compile = variable(bool, value=False)
    tensorflow_version = variable(str, value='unknown')
    payload_version = variable(str, value='unknown')
    suite_version = variable(str, value='unknown')
    valid_prog_environs = [f'+{site_keys.TENSORFLOW}', 'builtin']
    local = True                 # reads the two runs' outputs; runs nothing itself
    executable = 'true'
    time_limit = '5m'

    @run_after('init')
    def select(self):
        self.valid_systems = [('+' if self.device == site_keys.GPU else '-') + site_keys.GPU]
        self.tags = {'gap', self.model, self.device}
        if self.model == 'smallcnn':
            self.tags.add('smoke')
        self.skip_if(self.model not in self.models,
                     f'{self.model} is opt-in: run with -S models={",".join(self.models + [self.model])}')
        nums = {v: TrainingTest.get_variant_nums(variant=v, model=self.model, device=self.device,
                                                 scale=self.scale) for v in VARIANTS}
        self.skip_if(any(len(n) != 1 for n in nums.values()),
                     'TrainingTest has parameters added with -P: the gap pairs one LR&FS run '
                     'with one HR&VS run')
        self.training = {v: TrainingTest.variant_name(n[0]) for v, n in nums.items()}
        for name in self.training.values():
            self.depends_on(name, udeps.by_env)

    def summary_of(self, variant):
        run = self.getdep(self.training[variant])
        return sn.evaluate(payload_log.summary(os.path.join(run.stagedir, run.job.stdout)))

    @sanity_function
    def both_ran(self):
        # ReFrame runs this test only once both dependencies passed their own sanity.
        return sn.assert_true(all(self.summary_of(v)['epochs'] for v in VARIANTS))

    @run_before('performance')
    def set_perf_variables(self):
        if self.is_dry_run():
            return
        lrfs, hrvs = (self.summary_of(v) for v in VARIANTS)

        def ratio(numerator, denominator):
            return sn.make_performance_function(sn.defer(numerator / denominator), 'ratio')

        self.perf_variables = {
            # Seconds per megapixel trained: HR&VS's over LR&FS's.
            'hrvs_lrfs_time_per_mpx': ratio(lrfs['mpx_per_s'], hrvs['mpx_per_s']),
            'hrvs_lrfs_host_memory': ratio(hrvs['host_peak_rss_bytes'], lrfs['host_peak_rss_bytes']),
            'hrvs_lrfs_first_epoch_overhead': ratio(hrvs['first_epoch_overhead_s'],
                                                    lrfs['first_epoch_overhead_s']),
            'hrvs_lrfs_gflops': ratio(hrvs['gflops_per_s'], lrfs['gflops_per_s']),
        }
        if self.device == site_keys.GPU:
            self.perf_variables['hrvs_lrfs_device_memory'] = ratio(
                hrvs['device_peak_bytes'], lrfs['device_peak_bytes'])

    @run_before('run')
    def copy_workload(self):
        """The compared runs' settings, before the references are chosen by them."""
        run = self.getdep(self.training['hrvs'])
        for name in ('dataset', 'subset', 'epochs', 'pixel_budget', 'training_step', 'precision',
                     'jit_compile', 'tensorflow_version', 'payload_version', 'suite_version'):
            setattr(self, name, getattr(run, name))

    @run_before('run', always_last=True)
    def set_reference(self):
        reference = references.for_test(self)
        if reference:
            self.reference = reference
