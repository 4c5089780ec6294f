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
from reframe.core.exceptions import PerformanceError

from payload import contract

from . import checked, payload_log, references, scaling, site_keys
from .training import TrainingTest

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
# Time per megapixel is the inverse of the pixel rates: LR&FS's over HR&VS's.
INVERSE = {'hrvs_lrfs_time_per_mpx'}


@rfm.simple_test
class SizeShapeGap(rfm.RunOnlyRegressionTest, special=True):
    """HR&VS over LR&FS: time per megapixel, peak memory, first-epoch overhead, GFLOP/s."""

    # special=True: ReFrame's check_performance is extended to say which variant moved.

    model = parameter(list(contract.MODELS))
    device = parameter([site_keys.CPU, site_keys.GPU])
    scale = parameter(list(scaling.SCALES))
    models = variable(typ.List[str], value=['smallcnn'])     # as TrainingTest's
    # Copied from the HR&VS run, for the perflog and the references' workload check.
    dataset = variable(str, value='')
    subset = variable(str, value='')
    epochs = variable(checked.Int, value=0)
    pixel_budget = variable(str, value='')
    training_step = variable(str, value='')
    precision = variable(str, value='')
    jit_compile = variable(checked.Bool, value=False)
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
                                                 scale=self.scale) for v in contract.VARIANTS}
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
        return sn.assert_true(all(self.summary_of(v)['epochs'] for v in contract.VARIANTS))

    @run_before('performance')
    def set_perf_variables(self):
        if self.is_dry_run():
            return
        lrfs, hrvs = (self.summary_of(v) for v in contract.VARIANTS)
        self.perf_variables = {}
        for var in contract.perf_vars('SizeShapeGap'):
            if var.only == 'gpu' and self.device != site_keys.GPU:
                continue
            key = contract.BY_NAME[RATIOS[var.name][0]].key
            num, den = (lrfs, hrvs) if var.name in INVERSE else (hrvs, lrfs)
            self.perf_variables[var.name] = sn.make_performance_function(
                sn.defer(num[key] / den[key]), var.unit)

    def check_performance(self):
        try:
            super().check_performance()
        except PerformanceError as err:
            raise PerformanceError(f'{self.what_moved()}; {err}') from None

    def what_moved(self):
        """Which way each failed ratio moved, with both variants' own figures against their
        references (which both met: ReFrame runs the gap only after both passed)."""
        part = self.current_partition.fullname
        runs = {v: self.getdep(self.training[v]) for v in contract.VARIANTS}
        said = []
        for key, (value, ref, *_, result) in self.perfvalues.items():
            name = key.split(':')[-1]
            if result != 'fail':
                continue
            training_var, (rise, fall) = RATIOS[name]
            change = f' ({value / ref - 1:+.0%})' if ref else ''
            sides = []
            for v in contract.VARIANTS:
                if f'{part}:{training_var}' in runs[v].perfvalues:
                    got, vref, *_, unit, _ = runs[v].perfvalues[f'{part}:{training_var}']
                    against = f'reference {vref:.4g}' if vref else 'no reference'
                    sides.append(f'{contract.VARIANT_LABELS[v]} {got:.4g} {unit} ({against})')
            said.append(f'{name} {value:.3g}, reference {ref:.3g}{change}: '
                        f'{rise if value > ref else fall} relative to LR&FS on {part}'
                        + (f'; {training_var}: {", ".join(sides)}' if sides else ''))
        return '; '.join(said)

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
