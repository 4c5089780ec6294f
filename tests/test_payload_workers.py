"""Two payload workers on this machine, really communicating over loopback (TF_CONFIG)."""
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time

import pytest

from conftest import REPO, payload_error

# TensorFlow's servers bind the ports TF_CONFIG names themselves (all addresses, without
# SO_REUSEPORT), so a port can be chosen free but not held until they start. The ports are
# chosen outside the kernel's ephemeral range, which connect() and bind(0) hand out to any
# process, and the workers start again on others if one finds its port taken all the same.
PORT_TAKEN = 'could not start its server at'
START_ATTEMPTS = 5


def ephemeral_ports():
    try:
        with open('/proc/sys/net/ipv4/ip_local_port_range') as f:
            low, high = map(int, f.read().split())
    except (OSError, ValueError):
        low, high = 32768, 60999                # Linux's default
    return range(low, high + 1)


def free_ports(n):
    """``n`` distinct ports that nothing listens on now, outside the ephemeral range."""
    ephemeral = ephemeral_ports()
    candidates = [p for p in range(10000, 65536) if p not in ephemeral]
    ports = []
    for port in random.sample(candidates, len(candidates)):
        with socket.socket() as s:
            try:
                s.bind(('', port))
            except OSError:
                continue
        ports.append(port)
        if len(ports) == n:
            return ports
    pytest.fail(f'fewer than {n} free ports outside the ephemeral range {ephemeral}')


def listening_ports(pid):
    """The TCP ports process ``pid`` listens on (Linux: its sockets in /proc/net/tcp*)."""
    try:
        links = [os.readlink(f'/proc/{pid}/fd/{fd}') for fd in os.listdir(f'/proc/{pid}/fd')]
    except OSError:                             # it ended, or closed a file meanwhile
        return set()
    sockets = {link[len('socket:['):-1] for link in links if link.startswith('socket:[')}
    ports = set()
    for table in ('/proc/net/tcp', '/proc/net/tcp6'):
        with open(table) as f:
            for row in f.read().splitlines()[1:]:
                fields = row.split()
                if fields[3] == '0A' and fields[9] in sockets:      # 0A: LISTEN
                    ports.add(int(fields[1].rsplit(':', 1)[1], 16))
    return ports


class Worker:
    """One payload worker; its stdout and stderr go to files, readable while it runs."""

    def __init__(self, index, args, env, logs):
        self.index = index
        self.out, self.err = logs / f'worker-{index}.out', logs / f'worker-{index}.err'
        with open(self.out, 'w') as out, open(self.err, 'w') as err:
            self.proc = subprocess.Popen([sys.executable, '-m', 'payload', *args], stdout=out,
                                         stderr=err, env=env, cwd=REPO)

    def stderr(self):
        return self.err.read_text()

    def finish(self, timeout):
        """(stdout, stderr) once it ended."""
        self.proc.wait(timeout)
        return self.out.read_text(), self.stderr()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def serving(workers, ports, timeout=300):
    """True once every worker listens on its port; False if one found its port taken."""
    deadline = time.monotonic() + timeout
    while not all(port in listening_ports(w.proc.pid) for w, port in zip(workers, ports)):
        for w in workers:
            if w.proc.poll() is not None:
                if PORT_TAKEN in w.stderr():
                    return False
                pytest.fail(f'worker {w.index} ended before serving:\n{w.stderr()[-3000:]}')
        assert time.monotonic() < deadline, 'the workers never started their servers'
        time.sleep(0.1)
    return True


@pytest.fixture
def start_workers(tmp_path):
    """Start workers on loopback, each serving on its port when returned; worker N > 0
    writes its SSB lines to tmp_path/ssb-worker-N.log. All are stopped after the test."""
    started = []

    def start(data_dir, *args, count=2):
        for attempt in range(START_ATTEMPTS):
            ports = free_ports(count)
            hosts = [f'localhost:{p}' for p in ports]
            logs = tmp_path / f'start-{attempt}'
            logs.mkdir()
            workers = []
            for index in range(count):
                env = dict(os.environ, TF_CONFIG=json.dumps(
                    {'cluster': {'worker': hosts}, 'task': {'type': 'worker', 'index': index}}))
                workers.append(Worker(index, ['--data-dir', str(data_dir), '--worker-records-dir',
                                              str(tmp_path), *map(str, args)], env, logs))
            started.extend(workers)
            if serving(workers, ports):
                return workers
            for w in workers:
                w.stop()
        pytest.fail(f'a port was taken at each of {START_ATTEMPTS} starts')

    yield start
    for w in started:
        w.stop()


def lines(text, tag):
    return [json.loads(line.split(' ', 1)[1]) for line in text.splitlines()
            if line.startswith(tag + ' ')]


@pytest.mark.parametrize('variant, extra', [('lrfs', ['--batch-size', '4', '--image-size', '64',
                                                      '--crop-size', '56']),
                                            ('hrvs', ['--pixel-budget', '4k'])])
def test_two_workers_train_in_step(start_workers, tiny_dataset, tmp_path, variant, extra):
    workers = start_workers(tiny_dataset, '--variant', variant, '--epochs', '2', *extra)
    outputs = [w.finish(timeout=300) for w in workers]
    for w, (_, err) in zip(workers, outputs):
        assert w.proc.returncode == 0, err[-3000:]
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


def test_dead_worker_fails_the_other_quickly(start_workers, tiny_dataset, tmp_path):
    survivor, victim = start_workers(tiny_dataset, '--variant', 'hrvs', '--pixel-budget', '4k',
                                     '--epochs', '200')
    deadline = time.monotonic() + 180
    records = tmp_path / 'ssb-worker-1.log'
    while not (records.exists() and 'SSB-EPOCH' in records.read_text()):
        assert victim.proc.poll() is None and time.monotonic() < deadline, \
            'worker 1 never finished an epoch'
        time.sleep(0.2)
    victim.proc.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    _, err = survivor.finish(timeout=120)
    assert time.monotonic() - killed < 90
    assert survivor.proc.returncode == 2
    (error,) = [line for line in err.splitlines() if line.startswith('error: ')]
    assert error.startswith('error: worker 0 of 2: another worker died or stopped answering')


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



def test_free_ports_are_free_distinct_and_never_ephemeral():
    ports = free_ports(50)
    assert len(set(ports)) == 50
    assert not any(p in ephemeral_ports() for p in ports) and min(ports) >= 10000
    for port in ports:
        with socket.socket() as s:
            s.bind(('', port))


def test_workers_start_again_when_a_port_is_taken(start_workers, tiny_dataset, monkeypatch):
    with socket.socket() as taken:
        taken.bind(('', 0))
        taken.listen()
        calls, choose = [], free_ports

        def first_taken(n):
            calls.append(n)
            ports = choose(n)
            return ports if len(calls) > 1 else [taken.getsockname()[1]] + ports[1:]
        monkeypatch.setattr(sys.modules[__name__], 'free_ports', first_taken)
        workers = start_workers(tiny_dataset, '--variant', 'hrvs', '--epochs', '200')
    assert len(calls) == 2
    assert all(w.proc.poll() is None for w in workers)              # serving, training
    first_try = workers[0].out.parent.parent / 'start-0' / 'worker-0.err'
    assert PORT_TAKEN in first_try.read_text()
