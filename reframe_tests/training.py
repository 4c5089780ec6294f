"""Train a model on LR&FS and on HR&VS images and log time, throughput and memory.

Selection is by partition features only: ``cpu`` runs anywhere without the
``gpu`` feature (ReFrame's builtin ``generic`` system included), ``gpu`` on
partitions with it. ResNet-50 and VGG-16 are opt-in: ``-S models=smallcnn,resnet50,vgg16``.
Scales above ``single`` train data-parallel (see scaling.py) and report their
parallel efficiency against the ``single`` run of the same variant, on which they depend.
"""
import os

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.udeps as udeps
from reframe.core.backends import getscheduler
from reframe.core.builtins import (fixture, parameter, run_after, run_before,
                                   sanity_function, variable)
from reframe.core.exceptions import SanityError

from ssb_common import provenance
from ssb_contract import perf
from ssb_contract.options import MODELS, VARIANTS
from ssb_common.reframe_private import parameter_names

from . import checked, payload_log, scaling, site_keys, slurm_record
from .environment import run_python
from .in_image import InImage
from .mame_data import SyntheticMAMe
from .workload import Workload

# Outputs that share what sets them.
ENERGY = checked.output(str, 'it comes from the energy counters the payload reads')
TIMED = checked.output(float, 'it comes from the payload\'s timing lock')


@rfm.simple_test
class TrainingTest(rfm.RunOnlyRegressionTest, Workload, InImage):
    """One training run of the payload: a variant x model x device x scale."""

    variant = parameter(list(VARIANTS))
    model = parameter(list(MODELS))
    device = parameter([site_keys.CPU, site_keys.GPU])
    scale = parameter(list(scaling.SCALES))

    # Refuse images whose training step would need more (GiB); default: the
    # partition's extras['gpu_memory_gib'] on GPUs, host memory on CPUs.
    memory_limit_gib = variable(checked.Float, type(None), value=None)
    # Scales above 'single' wait for the single run of their variant and report
    # their throughput against it; false: run them alone, without that number.
    parallel_efficiency = variable(checked.Bool, value=True)
    # One timed payload run per host at a time (payload/hostlock.py): false trades the
    # figures' fidelity for a shorter session where tests share a host.
    timing_lock = variable(checked.Bool, value=True)

    # Outputs: filled in by the test itself, for the perflog (checked.output).
    #: Images per step and device.
    batch_size = variable(checked.output(int, 'set lrfs_batch_size or hrvs_batch_size instead'),
                          value=0)
    #: Devices (GPU) or nodes (CPU) against 'single'.
    hardware_ratio = variable(checked.output(int, 'choose the scale instead (-n %scale=node)'),
                              value=1)
    # Which code and data a result comes from (docs/versions.md).
    #: Of the suite's checkout, if any.
    git_revision = variable(checked.output(str, 'it is the checkout the tests are loaded from'),
                            value='unknown')
    dataset_fingerprint = variable(checked.output(str, 'set data_dir instead'), value='unknown')
    # Where the energy figures come from, or why there are none (docs/metrics.md, "Energy"), and
    # Slurm's own figure for the job (ConsumedEnergyRaw), a cross-check only.
    energy_source = variable(ENERGY, value='none')
    energy_note = variable(ENERGY, value='')
    sacct_energy_j = variable(checked.output(str, 'it comes from Slurm\'s accounting'),
                              value='n/a')
    #: Seconds the run waited for another timed run on its host: never part of a timed figure.
    timing_lock_wait_s = variable(checked.output(float, 'set timing_lock instead'), value=0.0)
    #: When its timed window opened and closed (Unix seconds), over all its workers.
    timed_start_unix = variable(TIMED, value=0.0)
    timed_end_unix = variable(TIMED, value=0.0)

    mame_data = fixture(SyntheticMAMe, scope='session')
    # A timed run owns its nodes: where the scheduler shares nodes between jobs (Slurm's
    # --exclusive), no other job's load lands in its figures. -S exclusive_access=false shares.
    exclusive_access = True
    stops_at_target = False         # True: the run may end before its epochs, at its target
    time_limit = '1h'

    @run_after('init')
    def depend_on_single_scale(self):
        self.tags.add(self.variant)
        if scaling.SCALES[self.scale] > 1:
            self.tags.add(scaling.MULTINODE_TAG)
        if self.scale != 'single' and self.parallel_efficiency:
            self.depends_on(self.single_scale_name(), udeps.by_env)

    def single_scale_name(self):
        cls = type(self)
        # Every parameter but the scale, those added by -P (".name") included.
        same = {name: getattr(self, name) for name in parameter_names(cls) if name != 'scale'}
        (num,) = cls.get_variant_nums(scale='single', **same)
        return cls.variant_name(num)

    def workload_variant(self):
        return self.variant

    @run_after('setup')
    def set_layout(self):
        # Here, not at init: variables given with -P are set by a later init hook.
        self.batch_size = self.batch_size_of(self.variant)
        try:
            layout = scaling.layout(self.scale, self.device, self.current_partition)
        except ValueError as err:
            self.skip(str(err))
        self.num_tasks = layout.num_tasks
        self.num_tasks_per_node = layout.num_tasks_per_node
        if layout.num_gpus_per_node:
            self.num_gpus_per_node = layout.num_gpus_per_node
        self.hardware_ratio = layout.hardware_ratio

    @run_before('run')
    def set_command(self):
        partition = self.current_partition
        data_dir = self.data_dir or partition.extras.get(site_keys.MAME_ROOT)
        self._synthetic = not data_dir
        if data_dir:
            self.dataset = data_dir
        else:
            data_dir = self.mame_data.data_dir
            self.dataset = self.mame_data.description
        stage_dir = self.stage_dir or partition.extras.get(site_keys.LOCAL_SCRATCH)
        opts = ['-m', 'payload',
                *self.payload_options(self.variant, data_dir=data_dir, stage_dir=stage_dir),
                '--timing-lock', 'host' if self.timing_lock else 'off']
        # Peak FLOP/s for peak_fraction: per device (a GPU, or a CPU node) from the
        # site config, times the devices of this scale; else the payload measures a matmul.
        peak = partition.extras.get(site_keys.PEAK_GFLOPS_PER_DEVICE)
        if peak:
            opts += ['--peak-gflops', str(float(peak) * self.hardware_ratio)]
        memory_limit = self.memory_limit_gib
        if memory_limit is None and self.device == site_keys.GPU:
            memory_limit = partition.extras.get(site_keys.GPU_MEMORY_GIB)
        if memory_limit is not None:
            opts += ['--memory-limit-gib', str(memory_limit)]
        opts += self.more_options()
        # run_python quotes each: a value reaches the payload as one argument, never as shell.
        run_python(self, opts, [data_dir, stage_dir])

    def more_options(self):
        """Payload options a derived test adds."""
        return []

    def expected_images(self):
        """Images in the subset; called by the sanity check only once the payload succeeded."""
        if self._synthetic:
            return self.mame_data.images(self.subset)
        if os.path.isfile(self.dataset):          # packed by `sizeshape_datasets pack`
            from sizeshape_datasets import hdf5
            return hdf5.count(self.dataset, self.subset)
        from sizeshape_datasets import mame
        return mame.count_rows(self.dataset, self.subset)

    @sanity_function
    def training_complete(self):
        # A job that Slurm ended (a node failed, its time ran out) left partial output
        # behind: Slurm's own record is the reason.
        if type(self.job.scheduler) is getscheduler('slurm'):
            ended_by_slurm = slurm_record.failure(self.job)
            if ended_by_slurm:
                raise SanityError(ended_by_slurm)
        sn.evaluate(payload_log.assert_training_complete(
            self.stdout, self.stderr, self.job.exitcode, self.epochs, self.expected_images,
            self.num_tasks, self.stops_at_target, len(self.job.nodelist or []) or None))
        return self.assert_ran_in_image(sn.evaluate(payload_log.summaries(self.stdout)))

    @run_before('performance')
    def set_perf_variables(self):
        if self.is_dry_run():       # no output to read
            return
        stdout = os.path.join(self.stagedir, self.job.stdout)   # hooks run outside the stage dir
        summary = sn.evaluate(payload_log.summary(stdout))
        versions = summary['versions']
        self.tensorflow_version = versions['tensorflow']
        self.payload_version = versions['payload']
        self.suite_version = versions['suite'] or 'unknown'
        self.git_revision = provenance.git_revision(os.path.dirname(__file__)) or 'none'
        self.dataset_fingerprint = summary['dataset_fingerprint'] or 'unknown'
        self.energy_source = summary['energy_source'] or 'none'
        self.energy_note = summary['energy_note']
        self.timing_lock_wait_s = summary['timing_lock_wait_s']
        windows = sn.evaluate(payload_log.summaries(stdout)).values()
        if summary['timed_start_unix'] is not None:
            self.timed_start_unix = min(w['timed_start_unix'] for w in windows)
        self.timed_end_unix = max(w['timed_end_unix'] for w in windows)
        if type(self.job.scheduler) is getscheduler('slurm'):     # not squeue: no sacct
            self.sacct_energy_j = slurm_record.energy(self.job.jobid)

        # Variables of steps a run may leave out are logged only where they ran: ReFrame
        # fails a NaN value, and a new set of fields starts a new perflog file (.log.hN).
        scratch = self.current_partition.extras.get(site_keys.LOCAL_SCRATCH)
        ran = {'stage': bool(self.stage_dir or scratch),
               'jit': self.jit_compile, 'energy': bool(summary['energy_source']),
               'prepare': self.prepare, 'gpu': self.device == site_keys.GPU,
               'spread': summary['steady_epoch_cv'] is not None, None: True}
        self.perf_variables = {
            v.name: sn.make_performance_function(
                payload_log.summary_value(self.stdout, v.key, v.scale), v.unit)
            for v in perf.perf_vars('TrainingTest') if v.key and ran[v.only]}
        # The single scale is its own baseline (efficiency 1).
        if self.scale == 'single':
            efficiency = sn.defer(1.0)
        elif self.parallel_efficiency:
            single = self.getdep(self.single_scale_name())
            single_throughput = sn.evaluate(payload_log.summary_value(
                os.path.join(single.stagedir, single.job.stdout), 'images_per_s'))
            efficiency = payload_log.summary_value(
                self.stdout, 'images_per_s', 1 / (single_throughput * self.hardware_ratio))
        else:
            efficiency = None
        if efficiency is not None:
            self.perf_variables['parallel_efficiency'] = sn.make_performance_function(
                efficiency, 'fraction')
