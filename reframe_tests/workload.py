"""What every test of the suite shares: the workload.

``Workload`` owns the test variables that say what is trained and how (model, epochs,
batch sizes, image sizes, pixel budget, batching, precision, ...), the payload's command
line built from them, and the workload identity (payload/contract.py, ``workload_fields``)
that references, drift and comparisons key on. ``TrainingTest`` and ``TimeToAccuracy`` run
the payload with it; ``SizeShapeGap`` takes it from the two runs it compares, so that its
perflog record names the same workload fields as theirs.
"""
import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, run_before, variable

from payload import contract

from . import checked, references, site_keys


class Workload(rfm.RegressionTestPlugin):
    """The workload variables, their checks, the payload's options and the identity.

    The tests declare the parameters (``model``, ``device``, ``scale`` and TrainingTest's
    ``variant``) themselves, in the order of their names (``TrainingTest %variant=lrfs
    %model=smallcnn ...``) that ``-n`` selects by."""

    models = variable(typ.List[str], value=[contract.SMOKE_MODEL])
    # 5 steady epochs: enough for each steady figure's spread and the gap's intervals.
    epochs = variable(checked.Int, value=6)
    lrfs_batch_size = variable(checked.Int, value=16)
    hrvs_batch_size = variable(checked.Int, value=1)
    image_size = variable(checked.Int, value=256)
    crop_size = variable(checked.Int, value=224)
    pixel_budget = variable(str, value='65k')
    upscale = variable(checked.Bool, value=True)  # false: images within the budget stay native
    # Decode and resize once, before training (timed on its own): training then reads pixels.
    prepare = variable(checked.Bool, value=False)
    # Copy the images to node-local storage before training (timed on its own);
    # default: the partition's extras['local_scratch'], else no staging.
    stage_dir = variable(str, value='')
    # single trains at batch 1 whatever hrvs_batch_size says; padded and bucketed use it.
    hrvs_batching = variable(str, value='single')
    retracing = variable(str, value='per-shape')
    # split: gradients traced per input shape, the optimizer update once; fused: one graph.
    training_step = variable(str, value='split')
    input_threads = variable(checked.Int, value=0)  # tf.data private pool; 0: tf.data's default
    precision = variable(str, value='float32')     # float32, mixed_float16, mixed_bfloat16
    jit_compile = variable(checked.Bool, value=False)  # XLA-compile the training step
    # Real MAMe root; default: the partition's extras['mame_root'], else synthetic data.
    data_dir = variable(str, value='')
    subset = variable(str, value='train')

    # Filled in from the run: the dataset (its path, or the synthetic data's recipe) and
    # which code a result comes from (docs/versions.md).
    dataset = variable(str, value='')
    tensorflow_version = variable(str, value='unknown')
    payload_version = variable(str, value='unknown')
    suite_version = variable(str, value='unknown')

    @run_after('init')
    def keep_for_refusal(self):
        checked.keep_for_refusal(self)

    @run_after('init')
    def select_partitions(self):
        self.valid_systems = [('+' if self.device == site_keys.GPU else '-') + site_keys.GPU]
        self.valid_prog_environs = [f'+{site_keys.TENSORFLOW}', 'builtin']
        self.tags = {self.model, self.device}
        if self.model == contract.SMOKE_MODEL:
            self.tags.add('smoke')
        self.skip_if(self.model not in self.models,
                     f'{self.model} is opt-in: run with '
                     f'-S models={",".join(self.models + [self.model])}')

    @run_before('run', always_last=True)
    def set_reference(self):
        """ReFrame's ``$ref`` to references/<system>.yaml, if the system has one and its entry
        is for this workload (references.py)."""
        reference = references.for_test(self)
        if reference:
            self.reference = reference

    @run_after('setup')
    def check_variables(self):
        # At set-up, not at init: a failure there only skips the test and the run passes.
        checked.check(self)

    def workload_variant(self):
        """The variant whose workload this test's results are of; None: both (the gap)."""
        return None

    def workload(self):
        """{test variable: value} that defines the work behind this test's results."""
        fields = contract.workload_fields(self.workload_variant(),
                                          to_accuracy=getattr(self, 'stops_at_target', False))
        return {name: getattr(self, name) for name in fields}

    def payload_options(self, variant, data_dir, stage_dir, batch_size):
        """The payload's command line (after ``python -m payload``) for ``variant``."""
        opts = ['--variant', variant, '--model', self.model, '--data-dir', data_dir,
                '--subset', self.subset, '--epochs', str(self.epochs),
                '--batch-size', str(batch_size), '--retracing', self.retracing,
                '--precision', self.precision, '--step', self.training_step,
                '--input-threads', str(self.input_threads)]
        if self.jit_compile:
            opts += ['--jit-compile']
        if self.prepare:
            opts += ['--prepare']
        if stage_dir:
            opts += ['--stage-dir', stage_dir]
        if variant == 'lrfs':
            opts += ['--image-size', str(self.image_size), '--crop-size', str(self.crop_size)]
        else:
            opts += ['--pixel-budget', self.pixel_budget, '--hrvs-batching', self.hrvs_batching]
            if not self.upscale:
                opts += ['--no-upscale']
        return opts

    def batch_size_of(self, variant):
        """Images per step and device: HR&VS's single batching trains one image a step."""
        if variant == 'lrfs':
            return self.lrfs_batch_size
        return 1 if self.hrvs_batching == 'single' else self.hrvs_batch_size
