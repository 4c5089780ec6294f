"""The workload options: one declaration each, which the payload's command line, the tests'
variables, the command line the tests build, the set-up checks and the workload identity are
all read from.

An option's ``name`` is its name everywhere: the ReFrame test variable (``-S NAME=...``), the
payload's setting and the SSB-SUMMARY key that echoes it. ``flag`` is the payload's option
(``--step`` for ``training_step``: the payload's options are as they always were); a flag
of a bool turns it away from its default (``--no-upscale``). LR&FS's and HR&VS's batch sizes
are two options of one flag, ``--batch-size``: a run trains one variant.
"""
import functools
import math
from dataclasses import dataclass
from typing import Optional

MODELS = ('smallcnn', 'resnet50', 'vgg16')
SMOKE_MODEL = 'smallcnn'
VARIANTS = ('lrfs', 'hrvs')
VARIANT_LABELS = {'lrfs': 'LR&FS', 'hrvs': 'HR&VS'}
SUBSETS = ('train', 'val', 'test')            # of the MAMe metadata
HRVS_BATCHING = ('single', 'padded', 'bucketed')
# split: gradients traced per input shape, the optimizer update once; fused: one graph.
STEPS = ('split', 'fused')
# per-shape: one graph per input shape; reduced: tf.function(reduce_retracing=True).
RETRACING = ('per-shape', 'reduced')
PRECISIONS = ('float32', 'mixed_float16', 'mixed_bfloat16')

# The smallest pixel budget: a 32x32 image, the least that ResNet-50's and VGG-16's five
# 2x downsamplings leave one pixel of (a budget of 0.5 px gave 1x1 images).
MIN_PIXEL_BUDGET = 32 * 32


class PixelBudget(str):
    """A pixel budget as written ('65k', '360k', '2m', 'native'), with its ``pixels``
    (65000, ...; None for native); ValueError saying why for anything else."""

    def __new__(cls, text):
        budget = super().__new__(cls, text)
        budget.pixels = _pixels(text)
        return budget

    def __getnewargs__(self):               # copied and pickled as its text
        return (str(self),)


def _pixels(text):
    value = text.strip().lower()
    if value == 'native':
        return None
    multiplier = {'k': 1_000, 'm': 1_000_000}.get(value[-1:], 1)
    try:
        number = float(value[:-1] if multiplier > 1 else value)
    except ValueError:
        raise ValueError(f'pixel budget {text!r} is not a number, "65k", "1m" or '
                         f'"native"') from None
    if not math.isfinite(number) or number * multiplier < MIN_PIXEL_BUDGET:
        raise ValueError(f'pixel budget {text!r} must be a finite number of at least '
                         f'{MIN_PIXEL_BUDGET} pixels (32x32), or "native"')
    return int(number * multiplier)


@dataclass(frozen=True)
class Option:
    name: str
    flag: str                 # the payload's option
    type: type                # int, float, bool, str, or a parser of text (PixelBudget)
    default: object           # None: the payload's option is required, or is off
    help: str                 # the payload's --help
    choices: tuple = ()
    minimum: Optional[int] = None       # whole numbers: the least allowed
    above: Optional[float] = None       # numbers: finite and greater than this ...
    maximum: Optional[float] = None     # ... and at most this
    why: str = ''                       # why the bounds are what they are
    variant: Optional[str] = None       # the variant it is of; None: both
    identity: bool = True               # part of the workload identity
    to_accuracy: bool = False           # only in runs to a target accuracy (TimeToAccuracy)
    parameter: bool = False             # a test parameter (-n selects it), not a variable
    required: bool = False              # the payload cannot run without it
    echoed: bool = True                 # the SSB-SUMMARY echoes it (payload/run.py)


OPTIONS = (
    Option('variant', '--variant', str, None, choices=VARIANTS, parameter=True, identity=False,
           required=True,
           help='lrfs: low-resolution fixed shape; hrvs: high-resolution variable shape'),
    Option('model', '--model', str, SMOKE_MODEL, choices=MODELS, parameter=True, identity=False,
           help=f'one of {", ".join(MODELS)} (default: {SMOKE_MODEL})'),
    Option('data_dir', '--data-dir', str, '', identity=False, required=True, echoed=False,
           help='dataset root in the MAMe layout, or an HDF5 file made from one by '
                '"python -m sizeshape_datasets pack"'),
    Option('subset', '--subset', str, 'train', choices=SUBSETS, help='the subset trained on'),
    Option('epochs', '--epochs', int, 6, minimum=2, echoed=False,
           why='steady-state time is the median of the epochs after the first',
           help='epochs, the first included (default 6: five steady epochs for each '
                'figure\'s spread)'),
    Option('lrfs_batch_size', '--batch-size', int, 16, minimum=1, variant='lrfs', echoed=False,
           help='images per step and device'),
    Option('hrvs_batch_size', '--batch-size', int, 1, minimum=1, variant='hrvs', echoed=False,
           help='images per step and device'),
    Option('image_size', '--image-size', int, 256, minimum=1, variant='lrfs',
           help='lrfs: images resized to this square'),
    Option('crop_size', '--crop-size', int, 224, minimum=1, variant='lrfs',
           help='lrfs: random square crop'),
    Option('pixel_budget', '--pixel-budget', PixelBudget, '65k', variant='hrvs',
           help='hrvs: resize every image to this many pixels, aspect ratio kept, as the '
                'paper\'s R65k-VS and R360k-VS (e.g. 65k, 360k, 2m, or native to keep each '
                'image as it is; default 65k)'),
    Option('upscale', '--no-upscale', bool, True, variant='hrvs',
           help='hrvs: keep images smaller than the pixel budget at their native size'),
    Option('hrvs_batching', '--hrvs-batching', str, 'single', choices=HRVS_BATCHING,
           variant='hrvs',
           help='hrvs: single (batch 1), padded (to the batch\'s largest image), bucketed '
                '(padded to a bounded set of shapes)'),
    Option('retracing', '--retracing', str, RETRACING[0], choices=RETRACING,
           help='per-shape: one graph per input shape (TensorFlow default); reduced: '
                'tf.function(reduce_retracing=True)'),
    Option('training_step', '--step', str, STEPS[0], choices=STEPS,
           help='split: the gradient graph is traced per input shape and the optimizer '
                'update once (default); fused: both in one graph, retraced whole per shape '
                '(the common pattern, to measure the difference)'),
    Option('precision', '--precision', str, PRECISIONS[0], choices=PRECISIONS,
           help='Keras dtype policy (mixed_float16 adds loss scaling); default float32'),
    Option('jit_compile', '--jit-compile', bool, False,
           help='compile the training step with XLA (tf.function(jit_compile=True))'),
    Option('input_threads', '--input-threads', int, 0, minimum=0,
           help='threads of the input pipeline\'s own pool (tf.data private thread pool); '
                '0: tf.data\'s default, shared with the training ops'),
    Option('prepare', '--prepare', bool, False, echoed=False,
           help='decode and resize this worker\'s images once, before training (timed on '
                'its own), and train from the prepared pixels; see "python -m '
                'sizeshape_datasets prepare"'),
    Option('stage_dir', '--stage-dir', str, '', identity=False, echoed=False,
           help='copy this worker\'s images into a private directory here (node-local '
                'storage) before training, timed on its own; removed at the end'),
    Option('target_accuracy', '--target-accuracy', float, None, above=0, maximum=1,
           to_accuracy=True, echoed=False,
           help='time to accuracy (implies --validate): stop after the epoch whose '
                'evaluation reaches val accuracy A (never before epoch 2) and report '
                'epochs_to_target and seconds_to_target; fail if --epochs end first'),
    Option('val_subset', '--val-subset', str, 'val', choices=SUBSETS, to_accuracy=True,
           echoed=False,
           help='the subset --validate evaluates on (default: val)'),
)
_BY_NAME = {o.name: o for o in OPTIONS}


def option(name):
    return _BY_NAME[name]


def default(name):
    return _BY_NAME[name].default


def of_run(variant=None, to_accuracy=False):
    """The options of a run of ``variant`` (None: of both variants' runs), to a target
    accuracy or not."""
    return [o for o in OPTIONS if (variant is None or o.variant in (None, variant))
            and (to_accuracy or not o.to_accuracy)]


@functools.cache     # the table is fixed; read for every run of a history
def workload_fields(variant=None, to_accuracy=False):
    """The test variables that define the work behind a result of ``variant``, or of the gap's
    pair of runs (None: both variants' options): the dataset (filled in by the tests from the
    data they read) and the options of the identity. References, drift and comparisons hold
    for one workload."""
    return ('dataset',) + tuple(o.name for o in of_run(variant, to_accuracy)
                                if o.identity and not o.parameter)
