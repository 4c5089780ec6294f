"""Nodes that fail under a multi-node run on the CI cluster: set DOWN by an administrator,
dead with every process on them, or one rank killed. Each run ends within 120 s with one
reason naming the node, from Slurm's own record, and leaves no performance record. The
first two faults share a test: the node set DOWN, once resumed, is the one that dies."""
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import CI_CONFIG, REPO
from reframe_runs import REFRAME, read_perflog
from test_slurm_cluster import cluster_env, worker_pids

pytestmark = pytest.mark.multinode

SSB_ACCEPTANCE = os.path.join(os.path.dirname(sys.executable), 'ssb-acceptance')
NODE = os.path.join(REPO, '.ci', 'cluster', 'node')
# Long enough never to end by itself; one epoch of two steps.
LONG_RUN = ['-S', 'epochs=1000', '-S', 'parallel_efficiency=false', '-S', 'models=smallcnn',
            '-S', 'SyntheticMAMe.images_per_class=2', '-S', 'time_limit=10m']
DEADLINE_S = 120


def start(cmd, workdir):
    env = {k: v for k, v in os.environ.items() if not k.startswith(('RFM_', 'SSB_'))}
    env.update(cluster_env(workdir), RFM_REFERENCE_PREFIX=str(workdir))
    return subprocess.Popen([*cmd], cwd=workdir, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def training(workdir, proc, timeout=600):
    """(stage directory, job id, [nodes]) once every rank of the run has finished an epoch."""
    deadline = time.monotonic() + timeout
    while True:
        assert proc.poll() is None, proc.communicate()[0][-4000:]
        assert time.monotonic() < deadline, 'the multi-node job never trained'
        time.sleep(1)
        for stagedir in glob.glob(str(workdir / '**' / 'TrainingTest_*'), recursive=True):
            logs = [os.path.join(stagedir, 'rfm_job.out'),
                    os.path.join(stagedir, 'ssb-worker-1.log')]
            if all(os.path.exists(p) and 'SSB-EPOCH' in open(p).read() for p in logs):
                with open(os.path.join(stagedir, 'rfm_job.sh')) as f:
                    name = re.search(r'--job-name="([^"]+)"', f.read()).group(1)
                jobid, nodespec = subprocess.run(['squeue', '-h', '-n', name, '-o', '%i %N'],
                                                 capture_output=True, text=True).stdout.split()
                nodes = subprocess.run(['scontrol', 'show', 'hostnames', nodespec],
                                       capture_output=True, text=True).stdout.split()
                return stagedir, jobid, nodes


def reasons(out):
    return [line.split('* Reason: ', 1)[1] for line in out.splitlines() if '* Reason: ' in line]


def no_performance_of(workdir, jobid):
    """ReFrame logs every result, failures too: the broken run's record says it failed and
    holds no performance value."""
    records = [r for path in glob.glob(str(workdir / '**' / 'perflogs' / '**' / '*.log*'),
                                       recursive=True)
               for r in read_perflog(path) if r['jobid'] == jobid]
    assert records, f'no record of job {jobid}'
    for r in records:
        assert r['result'] == 'fail', r
        assert not [k for k, v in r.items() if k.endswith('_value') and v not in ('', 'null')]


def wait_node_state(node, states, timeout=90):
    deadline = time.monotonic() + timeout
    while True:
        state = subprocess.run(['sinfo', '-h', '-n', node, '-o', '%T'], capture_output=True,
                               text=True).stdout.strip()
        if state in states:
            return
        assert time.monotonic() < deadline, f'{node} is {state}, not {states}'
        time.sleep(1)


def reframe(workdir, *args):
    return start([REFRAME, '-C', CI_CONFIG, '-c', os.path.join(REPO, 'reframe_tests'), '-r',
                  *args], workdir)


def fail_under_training(proc, workdir, fault, recover):
    """Once every rank of the run trained an epoch, ``fault(node)`` on the job's last node (not
    the batch host: only a rank runs there); (its output, job id, nodes, that node) once it
    ended, which must be within DEADLINE_S. ``recover(node)`` runs however the test ends."""
    victim = None
    try:
        _, jobid, nodes = training(workdir, proc)
        victim = nodes[-1]
        fault(victim)
        failed = time.monotonic()
        output, _ = proc.communicate(timeout=DEADLINE_S + 60)
        assert time.monotonic() - failed < DEADLINE_S, 'the run outlived its failure by 120 s'
    finally:
        if proc.poll() is None:
            proc.kill()
        if victim:
            recover(victim)
    assert proc.returncode != 0
    return output, jobid, nodes, victim


def scontrol(node, state, *more):
    subprocess.run(['scontrol', 'update', f'nodename={node}', f'state={state}', *more],
                   check=True)


def test_a_node_set_down_then_one_that_dies_fail_their_runs_naming_them(shared_tmp_path):
    """Set DOWN under ssb-acceptance: exit 2 naming the node. Resumed, it trains in the next
    multi-node run, on the same nodes; then every process of it is killed (slurmd,
    slurmstepd, the rank): Slurm finds it not responding and ends the job NODE_FAIL, named.
    Booted again, it returns to service by itself."""
    (shared_tmp_path / 'references').mkdir()
    out = shared_tmp_path / 'out'
    proc = start([SSB_ACCEPTANCE, '-C', CI_CONFIG, '--out', str(out),
                  '--checks', os.path.join(REPO, 'reframe_tests'), '--', '-n',
                  'TrainingTest.*variant=hrvs.*scale=2nodes', *LONG_RUN], shared_tmp_path)
    output, jobid, nodes, victim = fail_under_training(
        proc, shared_tmp_path, lambda node: scontrol(node, 'down', 'reason=ssb test: node lost'),
        lambda node: scontrol(node, 'resume'))
    assert proc.returncode == 2, output[-4000:]
    assert 'TESTS FAILED TO RUN (exit 2)' in output
    summary = json.loads((out / 'latest' / 'summary.json').read_text())
    (failure,) = summary['failed']
    assert failure['reason'].count('\n') == 0
    assert 'NODE_FAIL' in failure['reason'] and f'node {victim} went DOWN' in failure['reason']
    assert 'ssb test: node lost' in failure['reason'] and victim in output
    no_performance_of(shared_tmp_path, jobid)

    # Resumed, the node takes the next multi-node run: every rank trains an epoch there.
    wait_node_state(victim, {'idle'})

    def node(action):
        return lambda name: subprocess.run([NODE, action, name.removeprefix('node')], check=True)
    workdir = shared_tmp_path / 'dies'
    workdir.mkdir()
    proc = reframe(workdir, '-n', 'TrainingTest.*variant=lrfs.*scale=2nodes', *LONG_RUN,
                   '-J', f'nodelist={",".join(nodes)}')
    output, jobid, again, victim = fail_under_training(proc, workdir, node('kill'),
                                                       node('start'))
    assert sorted(again) == sorted(nodes)
    (reason,) = reasons(output)
    assert 'NODE_FAIL' in reason and f'node {victim} went DOWN' in reason, reason
    assert 'Not responding' in reason
    no_performance_of(workdir, jobid)
    wait_node_state(victim, {'idle'})


def test_a_killed_rank_fails_the_run_naming_its_node(shared_tmp_path):
    def kill_rank_1(_):
        for pid in worker_pids(1):
            os.kill(pid, signal.SIGKILL)
    proc = reframe(shared_tmp_path, '-n', 'TrainingTest.*variant=lrfs.*scale=2nodes', *LONG_RUN)
    output, jobid, nodes, _ = fail_under_training(proc, shared_tmp_path, kill_rank_1,
                                                  lambda node: None)
    (reason,) = reasons(output)
    assert 'another worker died or stopped answering' in reason, reason
    assert f'task 1 on {nodes[1]}: Killed' in reason, reason
    no_performance_of(shared_tmp_path, jobid)
