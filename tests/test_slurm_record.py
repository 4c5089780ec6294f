"""reframe_tests/slurm_record.py against the CI cluster's own accounting: a job Slurm ended
because an administrator set its node DOWN is named with that node; a job that ended by
itself is not Slurm's to explain; no energy plugin is no figure, not 0 J."""
import subprocess
import time
import types

import pytest

from reframe_tests import slurm_record

pytestmark = pytest.mark.multinode


def sbatch(*args):
    return subprocess.run(['sbatch', '--parsable', '--no-requeue', *args], capture_output=True,
                          text=True, check=True).stdout.strip()


def ended(jobid, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = subprocess.run(['sacct', '-j', jobid, '-X', '-n', '-P', '-o', 'State'],
                               capture_output=True, text=True).stdout.strip()
        if state and state not in ('PENDING', 'RUNNING', 'COMPLETING'):
            return state.split()[0]
        time.sleep(0.5)
    raise AssertionError(f'job {jobid} still {state}')


def test_a_node_set_down_is_named_from_the_accounting(shared_tmp_path):
    jobid = sbatch('-N2', '-o', str(shared_tmp_path / 'out'), '--wrap', 'srun sleep 300')
    deadline = time.monotonic() + 60
    while True:
        nodes = subprocess.run(['squeue', '-h', '-j', jobid, '-t', 'R', '-o', '%N'],
                               capture_output=True, text=True).stdout.strip()
        if nodes or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    names = subprocess.run(['scontrol', 'show', 'hostnames', nodes], capture_output=True,
                           text=True, check=True).stdout.split()
    try:
        subprocess.run(['scontrol', 'update', f'nodename={names[1]}', 'state=down',
                        'reason=slurm_record test'], check=True)
        state = ended(jobid)
    finally:
        subprocess.run(['scontrol', 'update', f'nodename={names[1]}', 'state=resume'])
    job = types.SimpleNamespace(state=state, jobid=jobid, nodelist=names)
    assert state == 'NODE_FAIL'
    line = slurm_record.failure(job)
    assert line.startswith(f'Slurm ended job {jobid} NODE_FAIL: a node of the job failed; '
                           f'node {names[1]} went DOWN at ')
    assert line.endswith(f'(slurm_record test); the job ran on {",".join(names)}')
    assert names[0] not in line.split(';')[1]          # the node that did not fail is not named


def test_a_job_that_ended_by_itself_is_not_explained(shared_tmp_path):
    jobid = sbatch('-o', str(shared_tmp_path / 'out'), '--wrap', 'exit 3')
    state = ended(jobid)
    assert state == 'FAILED'
    assert slurm_record.failure(types.SimpleNamespace(state=state, jobid=jobid,
                                                      nodelist=['node1'])) is None
    assert slurm_record.energy(jobid) == 'n/a: no energy accounting (AcctGatherEnergyType)'


def test_before_the_accounting_has_the_event_the_controller_names_the_node(shared_tmp_path):
    """A job that ended before its node was drained has no event in its window: the node the
    controller holds out of service now is named instead (the accounting lags it)."""
    jobid = sbatch('-w', 'node3', '-o', str(shared_tmp_path / 'out'), '--wrap', 'true')
    assert ended(jobid) == 'COMPLETED'
    # The drain comes after the window in which an event would be the job's.
    time.sleep(slurm_record.EVENT_AFTER_END.total_seconds() + 1.1)
    try:
        subprocess.run(['scontrol', 'update', 'nodename=node3', 'state=drain',
                        'reason=slurm_record fallback'], check=True)
        (found,) = slurm_record.failed_nodes(jobid, ['node3'])
    finally:
        subprocess.run(['scontrol', 'update', 'nodename=node3', 'state=resume'])
    assert found[:3] == ('node3', 'DRAINED', 'slurm_record fallback')
