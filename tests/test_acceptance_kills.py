"""Killing ssb-acceptance at three moments, each with another signal: (a) SIGTERM while its
ReFrame runs, (b) SIGKILL once ReFrame has stored the session and the command judges it,
(c) SIGINT while the report is written. After each: no ReFrame process of the run left, no
report published, ``latest`` unchanged, the lock free; the sessions of (b) and (c), stored
but never judged, are never the next run's previous session (acceptance/child.py,
judge/acceptance_judge.py). Real ReFrame runs of a test that sleeps, on ReFrame's builtin
generic system, sharing one --out and one results database."""
import fcntl
import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from ssb_references.runs import resultsdb

BIN = os.path.dirname(sys.executable)
SLEEPER = """
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_before, sanity_function, variable


@rfm.simple_test
class Sleeper(rfm.RunOnlyRegressionTest):
    valid_systems = ['*']
    valid_prog_environs = ['*']
    executable = 'sleep'
    seconds = variable(str, value='0')

    @run_before('run')
    def set_seconds(self):
        self.executable_opts = [self.seconds]

    @sanity_function
    def slept(self):
        return sn.assert_true(True)
"""
POLL_S = 0.05            # the windows of (b) and (c) are a reframe process long: seconds


def _stat(pid):
    """(state, process group) of a process, None when it is gone."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            fields = f.read().rsplit(') ', 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[2])


def _alive(pid):
    stat = _stat(pid)
    return stat is not None and stat[0] != 'Z'


def _in_groups(groups):
    return [int(p) for p in os.listdir('/proc') if p.isdigit()
            and (_stat(p) or ('Z', None))[0] != 'Z' and _stat(p)[1] in groups]


def _cmdline(pid):
    try:
        with open(f'/proc/{pid}/cmdline', 'rb') as f:
            return [a.decode(errors='replace') for a in f.read().split(b'\0')]
    except OSError:
        return []


def _children(pid):
    try:
        with open(f'/proc/{pid}/task/{pid}/children') as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def _wait_for(what, timeout, poll=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = what()
        if found:
            return found
        time.sleep(poll)
    return what()


class Night:
    """One ssb-acceptance run on the shared --out and database, started in its own session
    (so that its process group is its pid) and watched through /proc."""

    def __init__(self, tmp, *reframe_args):
        self.tmp, self.out = tmp, tmp / 'out'
        env = {k: v for k, v in os.environ.items() if not k.startswith(('RFM_', 'SSB_'))}
        env['TMPDIR'] = str(tmp)
        self.proc = subprocess.Popen(
            [os.path.join(BIN, 'ssb-acceptance'), '--checks', tmp / 'checks', '--out', self.out,
             '--db', tmp / 'results.db', '--', *reframe_args], cwd=tmp, env=env,
            start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.reframe = None            # the run's own ReFrame (its process group is its pid)

    def incomplete(self):
        found = list((self.out / 'reports').glob('.incomplete-*'))
        return found[0] if len(found) == 1 else None

    def watch(self):
        """Notes the run's ReFrame; true once it has finished and written its report."""
        for pid in _children(self.proc.pid):
            if self.reframe is None and '--report-file' in _cmdline(pid):
                self.reframe = pid
        report = self.incomplete() and self.incomplete() / 'reframe-report.json'
        return bool(self.reframe and report and report.exists() and not _alive(self.reframe))

    def wait_and_kill(self, moment, sig, ready):
        """Polls until ``ready()`` while nothing is published yet, then sends ``sig``; fails
        saying so when the window was missed."""
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and self.proc.poll() is None:
            if ready():
                partial = self.incomplete()
                if partial is None or (partial / 'summary.json').exists():
                    break                   # already (being) published: too late
                self.proc.send_signal(sig)
                out, err = self.proc.communicate(timeout=120)
                return err
            time.sleep(POLL_S)
        self.stop()
        pytest.fail(f'missed the window of moment ({moment}): the run ended or published '
                    f'before it (exit status {self.proc.returncode})')

    def session(self):
        """The UUID of the session ReFrame reported (read before the next run removes it)."""
        with open(self.incomplete() / 'reframe-report.json') as f:
            return json.load(f)['session_info']['uuid']

    def nothing_left(self):
        groups = {self.proc.pid} | ({self.reframe} if self.reframe else set())
        assert _wait_for(lambda: not _in_groups(groups), 60), \
            f'processes of the killed run left: {_in_groups(groups)}'

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.communicate()


def published(out):
    return sorted(n for n in os.listdir(out / 'reports') if not n.startswith('.')), \
        os.readlink(out / 'latest')


def lock_is_free(out):
    with open(out / '.lock', 'r+') as f:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)      # BlockingIOError: still held


def test_killed_at_three_moments_it_leaves_nothing_running_and_nothing_judged(tmp_path):
    (tmp_path / 'checks').mkdir()
    (tmp_path / 'checks' / 'training.py').write_text(SLEEPER)
    out = tmp_path / 'out'
    first = Night(tmp_path)
    stdout, stderr = first.proc.communicate(timeout=600)
    assert first.proc.returncode == 3, stdout + stderr       # a sleeper measures nothing
    judged = json.loads((out / 'latest' / 'summary.json').read_text())['session']
    before = published(out)

    # (a) SIGTERM while ReFrame runs: it cancels its job and stops.
    seconds = str(random.randint(4000, 9000))           # this moment's job, found by it
    night = Night(tmp_path, '-S', f'seconds={seconds}')
    jobs = []
    try:
        def job_runs():
            night.watch()
            jobs[:] = [int(p) for p in os.listdir('/proc')
                       if p.isdigit() and _cmdline(p)[:2] == ['sleep', seconds]]
            return jobs
        err = night.wait_and_kill('a', signal.SIGTERM, job_runs)
        assert night.proc.returncode == 2 and err.startswith(
            'ssb-acceptance: error: stopped by SIGTERM: ReFrame was stopped too'), err
        assert _wait_for(lambda: not any(map(_alive, jobs)), 60), 'the job outlived it'
        night.nothing_left()
    finally:
        night.stop()
        for pid in jobs:                 # never leave this test's job behind
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert published(out) == before
    lock_is_free(out)

    # (b) SIGKILL once ReFrame has finished, its session stored, while the command judges.
    night = Night(tmp_path)
    try:
        night.wait_and_kill('b', signal.SIGKILL, night.watch)
        assert night.proc.returncode == -signal.SIGKILL
        night.nothing_left()
        killed = [night.session()]
    finally:
        night.stop()
    assert published(out) == before
    lock_is_free(out)

    # (c) SIGINT while the report is written: one error line, nothing published.
    night = Night(tmp_path)
    try:
        def writing():          # (after watch(): the incomplete directory is this run's)
            partial = night.watch() and night.incomplete()
            return partial and ((partial / 'compare.csv').exists() or
                                (partial / 'report').exists())
        err = night.wait_and_kill('c', signal.SIGINT, writing)
        assert night.proc.returncode == 2, err
        assert err == 'ssb-acceptance: error: stopped by SIGINT: no report published\n'
        night.nothing_left()
        killed.append(night.session())
    finally:
        night.stop()
    assert published(out) == before
    lock_is_free(out)

    # Both killed sessions are stored, never judged: the next run compares with the first.
    stored = resultsdb.session_uuids(str(tmp_path / 'results.db'))
    assert set(killed) <= set(stored) and stored.index(judged) < stored.index(killed[0])
    last = Night(tmp_path)
    stdout, stderr = last.proc.communicate(timeout=600)
    assert last.proc.returncode == 3, stdout + stderr
    summary = json.loads((out / 'latest' / 'summary.json').read_text())
    assert summary['previous_session'] == judged
    for uuid in killed:
        assert (f'session {uuid} in the database was never judged by ssb-acceptance here (no '
                f'report under {out}/reports): not used as the previous session'
                in summary['notes']), summary['notes']
    assert not list((out / 'reports').glob('.incomplete-*'))
    assert len(published(out)[0]) == len(before[0]) + 1
