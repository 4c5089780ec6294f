"""Killing ssb-acceptance (SIGKILL or SIGTERM) while its ReFrame runs never leaves that ReFrame
or its job running (ssb_references/acceptance/child.py). A real ReFrame run of a test that
sleeps, on ReFrame's builtin generic system."""
import os
import random
import signal
import subprocess
import sys
import time

import pytest

BIN = os.path.dirname(sys.executable)
SLEEPER = """
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import sanity_function


@rfm.simple_test
class Sleeper(rfm.RunOnlyRegressionTest):
    valid_systems = ['*']
    valid_prog_environs = ['*']
    executable = 'sleep'
    executable_opts = ['{seconds}']

    @sanity_function
    def slept(self):
        return sn.assert_true(True)
"""


def _cmdline(pid):
    try:
        with open(f'/proc/{pid}/cmdline', 'rb') as f:
            return f.read().split(b'\0')
    except OSError:
        return []


def _pids_running(argv):
    want = [a.encode() for a in argv]
    return [int(p) for p in os.listdir('/proc') if p.isdigit() and _cmdline(p)[:2] == want]


def _alive(pid):
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().split(') ')[1][0] != 'Z'
    except OSError:
        return False


def _wait_for(what, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = what()
        if found:
            return found
        time.sleep(0.5)
    return what()


@pytest.mark.parametrize('sig', [signal.SIGKILL, signal.SIGTERM])
def test_killing_ssb_acceptance_stops_its_reframe_and_job(tmp_path, sig):
    seconds = str(random.randint(4000, 9000))           # this test's job, found by it
    (tmp_path / 'checks').mkdir()
    (tmp_path / 'checks' / 'training.py').write_text(SLEEPER.format(seconds=seconds))
    env = {k: v for k, v in os.environ.items() if not k.startswith('RFM_')}
    env['TMPDIR'] = str(tmp_path)
    acceptance = subprocess.Popen([os.path.join(BIN, 'ssb-acceptance'), '--checks',
                                   tmp_path / 'checks', '--out', tmp_path / 'out',
                                   '--db', tmp_path / 'results.db'],
                                  cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
    jobs = []
    try:
        jobs = _wait_for(lambda: _pids_running(['sleep', seconds]), 300)
        assert jobs, 'the job never started'
        with open(f'/proc/{acceptance.pid}/task/{acceptance.pid}/children') as f:
            (reframe,) = map(int, f.read().split())
        acceptance.send_signal(sig)
        out, err = acceptance.communicate(timeout=120)
        gone = _wait_for(lambda: not _alive(reframe) and not any(map(_alive, jobs)), 60)
        assert gone, 'ReFrame or its job outlived ssb-acceptance'
        if sig == signal.SIGTERM:
            assert acceptance.returncode == 2 and err.startswith(
                'ssb-acceptance: error: stopped by SIGTERM: ReFrame was stopped too'), err
    finally:
        for pid in jobs:                 # never leave this test's job behind
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if acceptance.poll() is None:
            acceptance.kill()
            acceptance.communicate()
