"""Time to accuracy: train until the validation accuracy reaches a target (DawnBench, MLPerf).

``TimeToAccuracy`` runs the payload with ``--target-accuracy``: it evaluates on the
``val`` subset after every epoch and stops at the epoch that reaches the target;
the clock runs from the first touch of the data to the end of that evaluation,
model set-up excluded (the MLPerf Training rule). Fails when the epochs end first.

On the suite's own synthetic data the classes are learnable by design and the
default target is reached in a few epochs on 2 cores. Real data has no default
target: name one (``-S target_accuracy=0.7``), or the test is skipped.
MLPerf scores several runs by dropping the fastest and the slowest and averaging
the rest: ``ssb-references`` does so for these variables (docs/references.md).
"""
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before, variable

from ssb_contract import perf
from ssb_contract.options import default

from . import checked, payload_log, site_keys
from .training import TrainingTest

# Outputs: the run's evaluations, filled in for the perflog (checked.output).
CURVE = checked.output(str, 'it comes from the run\'s evaluations')
# Reached by smallcnn on the default synthetic data in 5 to 7 epochs (LR&FS and HR&VS).
SYNTHETIC_TARGET = 0.5


@rfm.simple_test
class TimeToAccuracy(TrainingTest):
    """Epochs and seconds to a validation accuracy: a variant x model x device."""

    scale = parameter(['single'])
    # Validation accuracy to reach; default: SYNTHETIC_TARGET on synthetic data.
    target_accuracy = variable(checked.Float, type(None), value=default('target_accuracy'))
    epochs = 15                     # at most; the run stops at the target
    #: The subset evaluated after every epoch.
    val_subset = variable(str, value=default('val_subset'))
    # Per epoch, for the report's curve: comma-separated, oldest first.
    val_accuracy_curve = variable(CURVE, value='')
    val_time_curve = variable(CURVE, value='')      # seconds since the first touch of the data
    stops_at_target = True

    @run_after('init')
    def tag(self):
        self.tags.add('time_to_accuracy')

    @run_after('setup')
    def set_target(self):
        if self.target_accuracy is None:
            real = self.data_dir or self.current_partition.extras.get(site_keys.MAME_ROOT)
            self.skip_if(bool(real),
                         'real data has no default target: set -S target_accuracy=A')
            self.target_accuracy = SYNTHETIC_TARGET

    def more_options(self):
        return ['--input-probe-seconds', '0']

    @run_before('performance')
    def set_perf_variables(self):
        if self.is_dry_run():
            return
        TrainingTest.set_perf_variables(self)
        stdout = os.path.join(self.stagedir, self.job.stdout)
        records = [r for r in sn.evaluate(payload_log.epochs(stdout)) if r.get('worker', 0) == 0]
        self.val_accuracy_curve = ','.join(f'{r["val_accuracy"]:.4f}' for r in records)
        self.val_time_curve = ','.join(f'{r["elapsed_s"]:.2f}' for r in records)

        training = {k: v for k, v in self.perf_variables.items()
                    if k in perf.TTA_TRAINING_VARS}
        self.perf_variables = {
            v.name: sn.make_performance_function(
                payload_log.summary_value(self.stdout, v.key, v.scale), v.unit)
            for v in perf.perf_vars('TimeToAccuracy')}
        self.perf_variables.update(training)
