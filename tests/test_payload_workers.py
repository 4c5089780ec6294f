"""Two payload workers on this machine, really communicating over loopback (TF_CONFIG)."""
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from conftest import REPO, payload_error


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(('127.0.0.1', 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def start_workers(data_dir, records_dir, *args, workers=2):
    """Workers on loopback; worker N > 0 writes its SSB lines to records_dir/ssb-worker-N.log."""
    hosts = [f'localhost:{p}' for p in free_ports(workers)]
    procs = []
    for index in range(workers):
        env = dict(os.environ, TF_CONFIG=json.dumps(
            {'cluster': {'worker': hosts}, 'task': {'type': 'worker', 'index': index}}))
        procs.append(subprocess.Popen(
            [sys.executable, '-m', 'payload', '--data-dir', str(data_dir),
             '--worker-records-dir', str(records_dir), *map(str, args)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO))
    return procs


def lines(text, tag):
    return [json.loads(line.split(' ', 1)[1]) for line in text.splitlines()
            if line.startswith(tag + ' ')]


@pytest.mark.parametrize('variant, extra', [('lrfs', ['--batch-size', '4', '--image-size', '64',
                                                      '--crop-size', '56']),
                                            ('hrvs', ['--pixel-budget', '4k'])])
def test_two_workers_train_in_step(tiny_dataset, tmp_path, variant, extra):
    procs = start_workers(tiny_dataset, tmp_path, '--variant', variant, '--epochs', '2', *extra)
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode == 0, err[-3000:]
    assert not lines(outputs[1][0], 'SSB-EPOCH')           # worker 1 keeps off stdout
    texts = [outputs[0][0], (tmp_path / 'ssb-worker-1.log').read_text()]
    summaries = [lines(text, 'SSB-SUMMARY')[0] for text in texts]
    epochs = [lines(text, 'SSB-EPOCH') for text in texts]
    assert [s['worker'] for s in summaries] == [0, 1]
    for s in summaries:
        assert s['strategy'] == 'multi-worker' and s['workers'] == 2 and s['replicas'] == 2
        # 14 images each; LR&FS trains full batches of 4 only: 12 each.
        trained = 24 if variant == 'lrfs' else 28
        assert s['dataset_images'] == 29 and s['images_left_out'] == 29 - trained
    # Global counts and the synchronised loss are the same on both workers.
    for e0, e1 in zip(*epochs):
        assert e0['images'] == e1['images'] == trained
        assert e0['steps'] == e1['steps']
        assert e0['loss'] == pytest.approx(e1['loss'], rel=1e-6)
    if variant == 'hrvs':
        # Each worker trains on its own 14 images, each kept at its own shape.
        assert all(10 <= s['distinct_shapes'] <= 14 for s in summaries)


def test_dead_worker_fails_the_other_quickly(tiny_dataset, tmp_path):
    procs = start_workers(tiny_dataset, tmp_path, '--variant', 'hrvs', '--pixel-budget', '4k',
                          '--epochs', '200')
    survivor, victim = procs
    deadline = time.monotonic() + 180
    records = tmp_path / 'ssb-worker-1.log'
    while not (records.exists() and 'SSB-EPOCH' in records.read_text()):
        assert victim.poll() is None and time.monotonic() < deadline, \
            'worker 1 never finished an epoch'
        time.sleep(0.2)
    victim.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    out, err = survivor.communicate(timeout=120)
    assert time.monotonic() - killed < 90
    assert survivor.returncode == 2
    (error,) = [line for line in err.splitlines() if line.startswith('error: ')]
    assert error.startswith('error: worker 0 of 2: another worker died or stopped answering')
    victim.communicate()


def test_a_worker_whose_port_is_taken_says_so(tiny_dataset, tmp_path):
    with socket.socket() as taken:
        taken.bind(('', 0))                 # all addresses, as TensorFlow's server binds
        taken.listen()
        port = taken.getsockname()[1]
        env = dict(os.environ, TF_CONFIG=json.dumps(
            {'cluster': {'worker': [f'localhost:{port}', 'localhost:1']},
             'task': {'type': 'worker', 'index': 0}}))
        proc = subprocess.run([sys.executable, '-m', 'payload', '--data-dir', tiny_dataset,
                               '--variant', 'hrvs', '--worker-records-dir', str(tmp_path)],
                              capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    assert payload_error(proc) == (f'error: worker 0 of 2 could not start its server at '
                                   f'localhost:{port} (is its port in use?): Could not start '
                                   f'gRPC server')

