"""The split training step (gradients traced per shape, the optimizer update once) against the
fused one (both in one graph): the same losses for the same seed under every strategy,
precision and XLA, fewer seconds per new shape, and the per-shape figures in the summary."""
import json
import subprocess
import sys

import pytest

from conftest import REPO, payload_error, run_payload

# Trains a few steps of each step kind on the same random batches, in a fresh process:
# MirroredStrategy needs its two logical CPU devices before TensorFlow starts.
EQUIVALENCE = r'''
import json, os, sys
os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'
import numpy as np, tensorflow as tf, keras
cpu = tf.config.list_physical_devices('CPU')[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
from payload import models, train
strategy_kind, precision, jit = sys.argv[1], sys.argv[2], sys.argv[3] == 'jit'
rng = np.random.default_rng(0)
batches = [(rng.random((4, h, w, 3), np.float32), rng.integers(0, 29, 4).astype(np.int32),
            np.tile([h, w], (4, 1)).astype(np.int32)) for h, w in ((40, 56), (64, 48), (40, 56))]
losses = {}
for kind in ('fused', 'split'):
    strategy = (tf.distribute.MirroredStrategy(['/cpu:0', '/cpu:1']) if strategy_kind == 'mirrored'
                else tf.distribute.get_strategy())
    keras.utils.set_random_seed(0)
    step = train.TrainingStep(strategy, lambda: models.build('smallcnn', 29), 1e-2, False,
                              precision, jit, kind)
    out = []
    for images, labels, hw in batches * 2:
        data = tf.data.Dataset.from_tensors((images, labels, hw))
        (batch,) = list(strategy.experimental_distribute_dataset(data))
        totals = step(*batch).numpy()
        out.append(totals[train.LOSS_SUM] / totals[train.IMAGES])
    losses[kind] = {'losses': out, 'traces': step.traces}
print(json.dumps(losses))
'''


@pytest.mark.parametrize('strategy, precision, jit', [
    ('default', 'float32', 'nojit'),
    ('mirrored', 'float32', 'nojit'),
    ('default', 'mixed_float16', 'nojit'),        # the loss-scaling path
    ('default', 'mixed_bfloat16', 'nojit'),
    ('default', 'float32', 'jit'),
])
def test_split_step_trains_as_the_fused_one(strategy, precision, jit):
    proc = subprocess.run([sys.executable, '-c', EQUIVALENCE, strategy, precision, jit],
                          capture_output=True, text=True, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    fused, split = result['fused']['losses'], result['split']['losses']
    tolerance = 1e-5 if precision == 'float32' else 2e-2
    assert fused[3:] != fused[:3]                        # the weights did change
    assert split == pytest.approx(fused, rel=tolerance, abs=tolerance)
    assert result['fused']['traces'] == result['split']['traces'] == 2   # two shapes


def summary_of(proc):
    assert proc.returncode == 0, proc.stderr
    (line,) = [x for x in proc.stdout.splitlines() if x.startswith('SSB-SUMMARY ')]
    return json.loads(line.split(' ', 1)[1])


def test_split_costs_less_per_new_shape_and_says_so(tiny_dataset):
    args = ['--variant', 'hrvs', '--data-dir', tiny_dataset, '--epochs', '2', '--pixel-budget',
            '8k', '--input-probe-seconds', '0']
    split = summary_of(run_payload(*args))
    fused = summary_of(run_payload(*args, '--step', 'fused'))
    assert split['training_step'] == 'split' and fused['training_step'] == 'fused'
    assert split['first_loss'] == pytest.approx(fused['first_loss'], rel=1e-6)
    assert split['final_loss'] == pytest.approx(fused['final_loss'], rel=1e-4)
    for s in (split, fused):
        assert s['traced_graphs'] == s['distinct_shapes'] > 20
        assert 0 < s['graph_build_seconds_per_shape'] < s['trace_seconds_per_shape']
        assert s['compile_seconds'] is None                       # no XLA


# Traces both step kinds for the same new shapes in one process, each shape's two traces
# back to back (in alternating order), so that a busy machine slows both alike; prints what
# each per-shape graph holds, how often each function was traced and the seconds per trace.
PER_SHAPE = r'''
import json, os, sys
os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'
import numpy as np, tensorflow as tf, keras
from payload import models, train
SHAPES = [(32 + 4 * i, 40 + 2 * i) for i in range(int(sys.argv[1]))]
WRITES = {'AssignVariableOp', 'AssignAddVariableOp', 'AssignSubVariableOp'}
rng = np.random.default_rng(0)
batches = [(tf.constant(rng.random((1, h, w, 3), np.float32)), tf.constant([1], tf.int32),
            tf.constant([[h, w]], tf.int32)) for h, w in SHAPES]
steps = {}
for kind in ('fused', 'split'):
    keras.utils.set_random_seed(0)
    steps[kind] = train.TrainingStep(tf.distribute.get_strategy(),
                                     lambda: models.build('smallcnn', 29), 1e-2, False,
                                     'float32', False, kind)
seconds = {'fused': [], 'split': []}
for n, batch in enumerate(batches):
    for kind in (('split', 'fused') if n % 2 else ('fused', 'split')):
        seconds[kind].append(steps[kind].trace(*batch))
for batch in batches:
    for step in steps.values():
        step(*batch)
result = {'seconds': seconds, 'variables': len(steps['split'].model.trainable_variables)}
for kind, step in steps.items():
    ops = [op.type for op in step._step.get_concrete_function(*batches[0]).graph.get_operations()]
    result[kind] = {'ops': len(ops), 'writes': sum(op in WRITES for op in ops),
                    'traces': step._step.experimental_get_tracing_count(),
                    'apply_traces': step._apply and step._apply.experimental_get_tracing_count()}
print(json.dumps(result))
'''


def test_split_step_traces_the_optimizer_update_once():
    shapes = 9
    proc = subprocess.run([sys.executable, '-c', PER_SHAPE, str(shapes)], capture_output=True,
                          text=True, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    split, fused = result['split'], result['fused']
    # What a new shape traces: the fused step's graph writes every optimizer slot; the
    # split one's writes nothing, its update is one graph traced once for all shapes.
    assert split['traces'] == fused['traces'] == shapes
    assert fused['writes'] >= 2 * result['variables'] and fused['apply_traces'] is None
    assert split['writes'] == 0 and split['apply_traces'] == 1
    assert split['ops'] < 0.6 * fused['ops']
    # ... and it costs less: each shape's two traces compared, the first shape left out
    # (it builds the model's own first graphs), the median ratio of the others.
    ratios = sorted(s / f for s, f in zip(result['seconds']['split'][1:],
                                          result['seconds']['fused'][1:]))
    assert ratios[len(ratios) // 2] < 0.8, result['seconds']


def test_xla_reports_compile_seconds_and_threads_are_reported(tiny_dataset):
    s = summary_of(run_payload('--variant', 'lrfs', '--data-dir', tiny_dataset, '--epochs', '2',
                               '--batch-size', '8', '--image-size', '64', '--crop-size', '56',
                               '--jit-compile', '--input-threads', '1', '--intra-op-threads', '2',
                               '--inter-op-threads', '1'))
    assert s['distinct_shapes'] == 1 and s['compile_seconds'] is not None
    assert (s['input_threads'], s['intra_op_threads'], s['inter_op_threads']) == (1, 2, 1)
    assert s['cpus_available'] >= 1


def test_bad_thread_counts(tiny_dataset):
    line = payload_error(run_payload('--variant', 'lrfs', '--data-dir', tiny_dataset,
                                     '--input-threads', '-1'))
    assert line == 'error: --input-threads -1 must be at least 0'
