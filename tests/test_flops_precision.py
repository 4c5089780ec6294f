"""FLOP counting against hand counts and TensorFlow's profiler; precision, XLA, peak and
in-memory input options of the payload."""
import json

import pytest

from conftest import payload_error, run_payload


def conv_flops(k, cin, cout, h_out, w_out):
    """Forward FLOPs of a convolution: 2 (multiply and add) x kernel x output positions."""
    return 2 * k * k * cin * cout * h_out * w_out


def smallcnn_forward(height, width, classes=29):
    """smallcnn by hand: three 3x3 stride-2 'same' convolutions (16, 32, 64), global
    average pooling, Dense to the classes. 'same' with stride 2 gives ceil(side / 2)."""
    total, cin = 0, 3
    for cout in (16, 32, 64):
        height, width = -(-height // 2), -(-width // 2)
        total += conv_flops(3, cin, cout, height, width)
        cin = cout
    return total + 2 * 64 * classes


@pytest.fixture(scope='module')
def smallcnn():
    from payload import models
    return models.build('smallcnn', 29)


@pytest.mark.parametrize('height, width', [(64, 48), (57, 101), (224, 224)])
def test_smallcnn_count_matches_hand_count(smallcnn, height, width):
    from payload import flops
    counter = flops.FlopCounter(smallcnn)
    assert counter.forward_per_image(height, width) == smallcnn_forward(height, width)
    assert counter.training_per_image(height, width) == 3 * smallcnn_forward(height, width)
    # A batch of 4 for 2 steps and a batch of 1 once.
    assert counter.training({(4, height, width): 2, (1, height, width): 1}) == \
        9 * 3 * smallcnn_forward(height, width)


def test_count_matches_tensorflow_profiler(smallcnn):
    """The profiler's Conv2D and MatMul float operations are exactly the analytic count
    (it also counts BiasAdd and Mean, which the convention leaves out)."""
    import tensorflow as tf
    from tensorflow.python.profiler.option_builder import ProfileOptionBuilder

    from payload import flops
    graph = tf.function(lambda x: smallcnn(x, training=False)).get_concrete_function(
        tf.TensorSpec([1, 64, 48, 3], tf.float32)).graph
    options = (ProfileOptionBuilder(ProfileOptionBuilder.float_operation())
               .with_empty_output().build())
    profile = tf.compat.v1.profiler.profile(graph=graph, options=options)
    by_op = sum(node.total_float_ops for node in profile.children
                if node.name.endswith(('/convolution', '/MatMul')))
    assert by_op == flops.FlopCounter(smallcnn).forward_per_image(64, 48)


def test_resnet50_count_is_the_published_one():
    """Keras' ResNet-50 at 224x224: 3.86 G multiply-adds in its convolutions."""
    from payload import flops, models
    forward = flops.FlopCounter(models.build('resnet50', 29)).forward_per_image(224, 224)
    assert forward == pytest.approx(2 * 3.86e9, rel=0.01)


def run(*args):
    proc = run_payload(*args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    def records(tag):
        return [json.loads(text.split(' ', 1)[1]) for text in lines if text.startswith(tag + ' ')]
    epochs = records('SSB-EPOCH')
    (summary,) = records('SSB-SUMMARY')
    return epochs, summary


LRFS = ['--variant', 'lrfs', '--epochs', '2', '--batch-size', '8', '--image-size', '64',
        '--crop-size', '56']


def test_epoch_flops_and_given_peak(tiny_dataset):
    epochs, summary = run('--data-dir', tiny_dataset, *LRFS, '--peak-gflops', '50')
    expected = 24 * 3 * smallcnn_forward(56, 56) / 1e9     # 3 full batches of 8
    for e in epochs:
        assert e['gflops'] == pytest.approx(expected, rel=1e-12)
        assert e['gflops_per_s'] == pytest.approx(expected / e['seconds'])
    assert summary['gflops_per_epoch'] == pytest.approx(expected)
    assert summary['gflops_per_s'] == pytest.approx(epochs[1]['gflops_per_s'])
    assert summary['peak_gflops'] == 50 and summary['peak_source'] == 'option --peak-gflops'
    assert summary['peak_fraction'] == pytest.approx(summary['gflops_per_s'] / 50)
    assert summary['peak_measure_s'] == 0 and 0 <= summary['flops_count_s'] < 1
    assert summary['precision'] == 'float32' and summary['jit_compile'] is False
    assert summary['setup_s'] > 0


@pytest.mark.parametrize('options', [
    ['--precision', 'mixed_bfloat16'],
    ['--precision', 'mixed_float16'],
    ['--jit-compile'],
])
def test_precision_and_xla_train_on_cpu(tiny_dataset, options):
    epochs, summary = run('--data-dir', tiny_dataset, *LRFS, *options)
    assert [e['images'] for e in epochs] == [24, 24]            # 3 full batches of 8
    assert all(e['loss'] == e['loss'] and 0 < e['loss'] < 10 for e in epochs)   # finite
    assert summary['precision'] == (options[1] if options[0] == '--precision' else 'float32')
    assert summary['jit_compile'] == ('--jit-compile' in options)
    # No --peak-gflops: a matmul in the policy's compute dtype was measured.
    dtype = {'mixed_bfloat16': 'bfloat16', 'mixed_float16': 'float16'}.get(summary['precision'],
                                                                            'float32')
    assert summary['peak_source'].startswith(f'measured: 2048x2048 {dtype} matmul')
    assert summary['peak_gflops'] > 0 and 0 < summary['peak_fraction'] < 1


def test_memory_input_replays_the_same_batches(tiny_dataset):
    args = ['--data-dir', tiny_dataset, '--variant', 'hrvs', '--epochs', '2', '--pixel-budget',
            '4k', '--hrvs-batching', 'bucketed', '--batch-size', '4', '--peak-gflops', '50']
    files_epochs, files = run(*args)
    memory_epochs, memory = run(*args, '--input', 'memory')
    assert memory['input'] == 'memory' and memory['memory_input_s'] > 0
    assert files['input'] == 'files' and files['memory_input_s'] is None
    for key in ('images_per_epoch', 'steps_per_epoch', 'distinct_shapes', 'traced_graphs'):
        assert files[key] == memory[key], key
    assert files_epochs[0]['pixels'] == memory_epochs[0]['pixels']
    assert files_epochs[0]['gflops'] == memory_epochs[0]['gflops']


@pytest.mark.parametrize('args, message', [
    (['--peak-gflops', '0'], '--peak-gflops must be positive, got 0.0'),
    (['--precision', 'float64'], "argument --precision: invalid choice: 'float64'"),
    (['--input', 'tape'], "argument --input: invalid choice: 'tape'"),
])
def test_bad_options(tiny_dataset, args, message):
    line = payload_error(run_payload('--variant', 'lrfs', '--data-dir', tiny_dataset, *args))
    assert message in line
