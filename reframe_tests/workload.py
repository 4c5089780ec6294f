"""What every test of the suite shares: the workload.

``Workload`` owns the test variables that say what is trained and how (model, epochs,
batch sizes, image sizes, pixel budget, batching, precision, ...): one each of the workload
options (ssb_contract/options.py), with the table's default. From the same table come the
payload's command line built from them, their checks and the workload identity
(``workload_fields``) that references, drift and comparisons key on. ``TrainingTest`` and
``TimeToAccuracy`` run the payload with it; ``SizeShapeGap`` takes it from the two runs it
compares, so that its perflog record names the same workload fields as theirs.
"""
import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, run_before, variable

from ssb_contract import flags
from ssb_contract.options import SMOKE_MODEL, default, of_run, workload_fields

from . import checked, references, site_keys


class Workload(rfm.RegressionTestPlugin):
    """The workload variables, their checks, the payload's options and the identity.

    The tests declare the parameters (``model``, ``device``, ``scale`` and TrainingTest's
    ``variant``) themselves, in the order of their names (``TrainingTest %variant=lrfs
    %model=smallcnn ...``) that ``-n`` selects by."""

    #: The models that run: ResNet-50 and VGG-16 are opt-in.
    models = variable(typ.List[str], value=[SMOKE_MODEL])
    #: Epochs, the first included: 6 gives 5 steady epochs for each figure's spread and the
    #: gap's intervals.
    epochs = variable(checked.Int, value=default('epochs'))
    #: LR&FS images per step and device.
    lrfs_batch_size = variable(checked.Int, value=default('lrfs_batch_size'))
    #: HR&VS images per step and device, with padded or bucketed batching (single: 1).
    hrvs_batch_size = variable(checked.Int, value=default('hrvs_batch_size'))
    #: LR&FS: the square images are resized to, and the square cropped from it.
    image_size = variable(checked.Int, value=default('image_size'))
    crop_size = variable(checked.Int, value=default('crop_size'))
    #: HR&VS: pixels per image, aspect ratio kept ('65k', '360k', 'native', ...).
    pixel_budget = variable(str, value=default('pixel_budget'))
    #: HR&VS: false keeps images within the budget at their native size.
    upscale = variable(checked.Bool, value=default('upscale'))
    #: Decode and resize once, before training (timed on its own): training then reads pixels.
    prepare = variable(checked.Bool, value=default('prepare'))
    #: Copy the images to node-local storage before training (timed on its own);
    #: default: the partition's extras['local_scratch'], else no staging.
    stage_dir = variable(str, value=default('stage_dir'))
    #: HR&VS: single (batch 1), padded or bucketed (at hrvs_batch_size).
    hrvs_batching = variable(str, value=default('hrvs_batching'))
    #: per-shape: one graph per input shape; reduced: tf.function(reduce_retracing=True).
    retracing = variable(str, value=default('retracing'))
    #: split: gradients traced per input shape, the optimizer update once; fused: one graph.
    training_step = variable(str, value=default('training_step'))
    #: tf.data's private pool for the input pipeline; 0: tf.data's default.
    input_threads = variable(checked.Int, value=default('input_threads'))
    #: float32, mixed_float16, mixed_bfloat16.
    precision = variable(str, value=default('precision'))
    #: XLA-compile the training step.
    jit_compile = variable(checked.Bool, value=default('jit_compile'))
    #: Real MAMe root; default: the partition's extras['mame_root'], else synthetic data.
    data_dir = variable(str, value=default('data_dir'))
    #: The subset trained on.
    subset = variable(str, value=default('subset'))

    # Outputs, filled in from the run and logged, never set by hand (checked.output): the
    # dataset (its path, or the synthetic data's recipe) and which code a result comes from
    # (docs/versions.md).
    dataset = variable(checked.output(str, 'set data_dir instead'), value='')
    tensorflow_version = variable(
        checked.output(str, 'it is the TensorFlow of the programming environment'),
        value='unknown')
    payload_version = variable(checked.output(str, 'it is the installed payload\'s'),
                               value='unknown')
    suite_version = variable(checked.output(str, 'it is the installed suite\'s'),
                             value='unknown')

    @run_after('init')
    def keep_for_refusal(self):
        checked.keep_for_refusal(self)

    @run_after('init')
    def select_partitions(self):
        self.valid_systems = [('+' if self.device == site_keys.GPU else '-') + site_keys.GPU]
        self.valid_prog_environs = [f'+{site_keys.TENSORFLOW}', 'builtin']
        self.tags = {self.model, self.device}
        if self.model == SMOKE_MODEL:
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

    def to_accuracy(self):
        """Whether this test's runs train to a target accuracy."""
        return getattr(self, 'stops_at_target', False)

    def workload(self):
        """{test variable: value} that defines the work behind this test's results."""
        return {name: getattr(self, name)
                for name in workload_fields(self.workload_variant(), self.to_accuracy())}

    def payload_options(self, variant, **given):
        """The payload's command line (after ``python -m payload``) for a run of ``variant``:
        the workload options' values, those in ``given`` (data_dir and stage_dir, as the
        partition resolves them) instead of the test's."""
        values = {o.name: getattr(self, o.name) for o in of_run(variant, self.to_accuracy())}
        return flags.command_line({**values, 'variant': variant, **given})

    def batch_size_of(self, variant):
        """Images per step and device."""
        return getattr(self, f'{variant}_batch_size')
