"""One timed payload run per host at a time (payload/hostlock.py): real processes, real flocks."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO, payload_error, run_payload
from payload import PayloadError, hostlock, protocol

# Takes the lock as the payload does, says when, and holds it for argv[1] seconds.
HOLDER = """
import json, sys, time
from payload import hostlock
lock = hostlock.HostLock().acquire()
print(json.dumps(hostlock.summary(lock)), flush=True)
time.sleep(float(sys.argv[1]))
print(json.dumps({'end': time.time()}), flush=True)
"""


def holder(lock_dir, seconds, **env):
    return subprocess.Popen([sys.executable, '-c', HOLDER, str(seconds)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, SSB_LOCK_DIR=str(lock_dir), **env))


def window(proc):
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    start, end = (json.loads(line) for line in out.splitlines())
    return start['timed_start_unix'], end['end'], start['timing_lock_wait_s'], err


def disjoint(a, b):
    return a[1] <= b[0] or b[1] <= a[0]


def test_two_payload_runs_started_together_never_overlap(tmp_path, tiny_dataset):
    env = dict(os.environ, SSB_LOCK_DIR=str(tmp_path / 'locks'))
    args = [sys.executable, '-m', 'payload', '--variant', 'hrvs', '--data-dir', tiny_dataset,
            '--epochs', '2', '--input-probe-seconds', '0', '--peak-gflops', '100']
    procs = [subprocess.Popen(args, cwd=REPO, env=env, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(2)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        (summary,) = [r for tag, r in filter(None, map(protocol.parse, out.splitlines()))
                      if tag == protocol.SUMMARY_TAG]
        results.append((summary, err))
    (first, _), (second, _) = sorted(results, key=lambda r: r[0]['timed_start_unix'])
    # The timed windows, first touch of the data to the summary, are disjoint ...
    assert first['timed_end_unix'] <= second['timed_start_unix']
    # ... and the second run's wait is its own figure, said on stderr, not in its epochs.
    waited = max(results, key=lambda r: r[0]['timing_lock_wait_s'])
    assert waited[0]['timing_lock_wait_s'] > 1.0
    assert 'progress: waiting for another timed run on this host' in waited[1]
    assert waited[0]['timing_lock'].startswith(str(tmp_path / 'locks'))


def test_the_ranks_of_one_job_hold_the_lock_together(tmp_path):
    job = {'SLURM_JOB_ID': '4242', 'SLURM_STEP_ID': '0'}
    ranks = [holder(tmp_path, 3, **job) for _ in range(2)]
    time.sleep(0.5)
    other = holder(tmp_path, 0.5, SLURM_JOB_ID='4243', SLURM_STEP_ID='0')
    rank_windows = [window(p) for p in ranks]
    other_window = window(other)
    assert all(w[2] < 1.0 for w in rank_windows)            # ranks never wait for each other
    assert not disjoint(*rank_windows)                      # they time together
    assert all(disjoint(other_window, w) for w in rank_windows)  # another job waits for both
    assert other_window[2] > 1.5


def test_a_killed_holder_releases_the_host(tmp_path):
    first = holder(tmp_path, 60)
    json.loads(first.stdout.readline())             # it holds the lock now
    first.send_signal(signal.SIGKILL)
    first.wait()
    _, _, waited, _ = window(holder(tmp_path, 0))
    assert waited < 1.0


def test_the_lock_files_never_follow_links(tmp_path):
    target = tmp_path / 'precious'
    target.write_text('keep me')
    locks = tmp_path / 'locks'
    locks.mkdir(mode=0o700)
    os.symlink(target, locks / 'somehost.lock')
    with pytest.raises(PayloadError, match='cannot open the timing lock'):
        hostlock.HostLock(directory=str(locks), host='somehost').acquire()
    assert target.read_text() == 'keep me'


@pytest.mark.parametrize('plant', ['symlink', 'world-writable', 'file'])
def test_a_lock_directory_someone_else_could_control_is_refused(tmp_path, monkeypatch, plant):
    path = tmp_path / 'locks'
    if plant == 'symlink':
        (tmp_path / 'elsewhere').mkdir()
        os.symlink(tmp_path / 'elsewhere', path)
    elif plant == 'world-writable':
        path.mkdir()
        os.chmod(path, 0o777)
    else:
        path.write_text('')
    monkeypatch.setenv(hostlock.DIR_ENV, str(path))
    with pytest.raises(PayloadError, match='timing lock directory'):
        hostlock.lock_dir()


def test_the_payload_says_so_in_one_error_line(tmp_path, tiny_dataset, monkeypatch):
    os.symlink(tmp_path, tmp_path / 'link')
    monkeypatch.setenv(hostlock.DIR_ENV, str(tmp_path / 'link'))
    error = payload_error(run_payload('--variant', 'hrvs', '--data-dir', tiny_dataset))
    assert 'timing lock directory' in error and 'SSB_LOCK_DIR' in error


def test_group_tokens_follow_the_launcher(monkeypatch):
    for name in ('SLURM_JOB_ID', 'SLURM_STEP_ID', 'PMIX_NAMESPACE', 'OMPI_MCA_orte_ess_jobid',
                 'TF_CONFIG'):
        monkeypatch.delenv(name, raising=False)
    assert hostlock.group_token() == f'pid-{os.getpid()}'
    monkeypatch.setenv('TF_CONFIG', json.dumps({'cluster': {'worker': ['a:1', 'b:2']},
                                                'task': {'index': 1}}))
    tf_token = hostlock.group_token()
    monkeypatch.setenv('TF_CONFIG', json.dumps({'cluster': {'worker': ['a:1', 'b:2']},
                                                'task': {'index': 0}}))
    assert hostlock.group_token() == tf_token and tf_token.startswith('tf-')   # every worker
    monkeypatch.setenv('SLURM_JOB_ID', '7')
    monkeypatch.setenv('SLURM_STEP_ID', '2')
    assert hostlock.group_token() == 'slurm-7.2'
