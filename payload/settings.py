"""What a run of the payload was asked for: frozen once cli.py has parsed and checked the
command line, and handed in parts to the code that uses each.

Every default is resolved here, never later: the batch size of the variant, the threads of
the job (SLURM_CPUS_PER_TASK), validation implied by a target accuracy.
"""
import dataclasses
from dataclasses import dataclass
from typing import Optional

from ssb_contract.options import PixelBudget


@dataclass(frozen=True)
class Batches:
    """How this run's images become batches: the variant, its resolution, its batch size and
    the input pipeline's threads."""
    variant: str
    batch_size: int                 # per device
    image_size: int                 # LR&FS
    crop_size: int
    pixel_budget: PixelBudget       # HR&VS
    upscale: bool
    hrvs_batching: str
    input_threads: int

    @property
    def budget(self):
        """HR&VS pixels per image; None: native."""
        return self.pixel_budget.pixels


@dataclass(frozen=True)
class Step:
    """The training step: the model, its optimizer, and how it is traced and compiled."""
    model: str
    learning_rate: float
    retracing: str
    training_step: str              # split or fused
    precision: str
    jit_compile: bool


@dataclass(frozen=True)
class Data:
    """Where the images come from, and what is done with them before training."""
    data_dir: str
    subset: str
    stage_dir: str                  # '': no staging
    prepare: bool
    input: str                      # files, or memory (one epoch replayed)


@dataclass(frozen=True)
class Validation:
    validate: bool                  # with a target accuracy: always
    val_subset: str
    target_accuracy: Optional[float]


@dataclass(frozen=True)
class Settings:
    batches: Batches
    step: Step
    data: Data
    validation: Validation
    epochs: int
    seed: int
    strategy: str
    intra_op_threads: Optional[int]
    inter_op_threads: Optional[int]
    memory_limit_gib: Optional[float]
    peak_gflops: Optional[float]
    timing_lock: str
    progress_seconds: float
    input_probe_seconds: float
    worker_records_dir: str

    def value(self, name):
        """The setting ``name``, in whichever part holds it (the summary echoes some)."""
        for part in (self, self.batches, self.step, self.data, self.validation):
            if name in {f.name for f in dataclasses.fields(part)}:
                return getattr(part, name)
        raise KeyError(name)


def of(cls, values):
    """A ``cls`` from ``values`` ({name: value}; more than it needs)."""
    return cls(**{f.name: values[f.name] for f in dataclasses.fields(cls)})
