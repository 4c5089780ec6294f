""".ci/cluster/start refuses what it cannot start with one `error:` line, before anything is
started (the running CI cluster is left as it is), and .ci/cluster/stop leaves nothing behind
(tests/test_node_failure.py restarts a node with .ci/cluster/node)."""
import os
import socket
import subprocess

import pytest

from conftest import REPO

pytestmark = pytest.mark.multinode

START = os.path.join(REPO, '.ci', 'cluster', 'start')


def cluster_state():
    """What a half-started cluster would leave: processes, interfaces, /etc/slurm's link."""
    procs = subprocess.run(['pgrep', '-c', '-x', 'munged|slurmctld|slurmd|slurmdbd|mariadbd'],
                           capture_output=True, text=True).stdout.strip()
    links = subprocess.run(['ip', '-o', 'link', 'show'], capture_output=True, text=True).stdout
    return procs, sorted(line.split(': ')[1] for line in links.splitlines()
                         if 'ssb-' in line), os.path.realpath('/etc/slurm/slurm.conf')


def start(tmp_path, prefix=(), **env):
    """The start script on a directory of its own, so that a refusal must come before it
    touches anything: the CI cluster runs meanwhile."""
    full = dict(os.environ, SSB_SLURM_DIR=str(tmp_path / 'cluster'), SSB_SLURM_NET='10.253.7',
                **env)
    before = cluster_state()
    proc = subprocess.run([*prefix, START], capture_output=True, text=True, env=full, timeout=60)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert cluster_state() == before
    assert not os.path.exists(tmp_path / 'cluster' / 'run')        # nothing started there
    errors = proc.stderr.splitlines()
    assert len(errors) == 1 and errors[0].startswith('error: '), proc.stderr
    return errors[0]


@pytest.mark.parametrize('count, message', [
    ('0', 'SSB_SLURM_NODES=0: the cluster needs at least 1 node'),
    ('abc', "SSB_SLURM_NODES='abc' is not a whole number"),
    ('3; touch /tmp/pwned', "SSB_SLURM_NODES='3; touch /tmp/pwned' is not a whole number"),
    ('500', 'SSB_SLURM_NODES=500: this machine holds at most'),
])
def test_a_node_count_it_cannot_hold_is_refused(slurm, tmp_path, count, message):
    assert message in start(tmp_path, SSB_SLURM_NODES=count)


def test_without_the_capability_for_namespaces_it_says_which(slurm, tmp_path):
    error = start(tmp_path, prefix=('capsh', '--drop=cap_sys_admin', '--'))
    assert "cannot create the nodes' namespaces: this process lacks CAP_SYS_ADMIN" in error


def test_a_taken_port_is_named(slurm, tmp_path):
    with socket.socket() as taken:
        taken.bind(('0.0.0.0', 0))
        taken.listen()
        port = taken.getsockname()[1]
        error = start(tmp_path, SSB_SLURM_CTLD_PORT=str(port))
    assert f'port {port} (slurmctld) is taken by ' in error
    assert f'(pid {os.getpid()}): stop it, or set SSB_SLURM_CTLD_PORT' in error


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return str(s.getsockname()[1])


def test_a_second_cluster_beside_the_running_one_is_refused(slurm, tmp_path):
    # Its own ports: the running cluster's would be named first.
    error = start(tmp_path, SSB_SLURM_CTLD_PORT=free_port(), SSB_SLURM_DBD_PORT=free_port())
    assert 'another cluster runs here (its bridge ssb-br0 exists)' in error
