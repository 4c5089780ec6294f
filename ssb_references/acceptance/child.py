"""ReFrame as a child that cannot outlive ``ssb-acceptance``: killed, even with SIGKILL, the
command left its ReFrame running, orphaned, with the lock already free. The child runs in
its own process group and gets SIGTERM when its parent dies (Linux's parent-death signal);
SIGTERM, SIGINT or SIGHUP to the command is passed on to that group. ReFrame takes SIGTERM as
its cue to cancel its jobs and stop."""
import contextlib
import ctypes
import os
import signal
import subprocess

PR_SET_PDEATHSIG = 1
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Stopped(Exception):
    """The command was told to stop (the signal's name), and ReFrame stopped with it."""


def _die_with(parent):
    def set_up():
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:            # the parent died before prctl: do not start
            os._exit(1)
    return set_up


def run(cmd, **kwargs):
    """``subprocess.run(cmd, **kwargs).returncode``, tied to this process; Stopped when a
    signal to this process stopped it."""
    received = []

    def forward(signum, frame):
        received.append(signal.Signals(signum).name)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)

    proc = subprocess.Popen(cmd, process_group=0, preexec_fn=_die_with(os.getpid()), **kwargs)
    before = {s: signal.signal(s, forward) for s in FORWARDED}
    try:
        status = proc.wait()
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
    if received:
        raise Stopped(f'stopped by {received[0]}: ReFrame was stopped too (exit status {status})')
    return status
