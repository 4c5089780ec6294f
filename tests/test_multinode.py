"""Training across the CI cluster's nodes (.ci/cluster/start, site_configs/ci.py): nodes of
their own, data parallelism over srun with one rank per node, and two users whose timed runs
never share a node. The nodes share this machine's cores: the figures here are functional
proof, not performance."""
import glob
import json
import os
import pwd
import stat
import subprocess
import sys
import uuid

import pytest

from conftest import CI_CONFIG, CLUSTER_DIR, REPO
from reframe_runs import read_perflog, run_reframe
from test_slurm_cluster import cluster_env, slurm_interval

pytestmark = pytest.mark.multinode

NODES = int(os.environ.get('SSB_SLURM_NODES', '3'))
USERS = ('ssb-user1', 'ssb-user2')          # made by .ci/cluster/start
LSCRATCH = os.path.join(CLUSTER_DIR, 'lscratch')
# Functional proof: the fewest epochs and images that still give each rank whole steps
# (58 images: one LR&FS step of 16 a rank at 3 nodes).
SMALL = ['-S', 'epochs=2', '-S', 'SyntheticMAMe.images_per_class=2']


def srun(*args):
    return subprocess.run(['srun', *args], capture_output=True, text=True, timeout=120)


def test_nodes_have_names_tmp_and_scratch_of_their_own(slurm):
    states = subprocess.run(['sinfo', '-h', '-N', '-o', '%N %T'], capture_output=True,
                            text=True, check=True).stdout.split('\n')
    nodes = dict(line.split() for line in states if line.strip())
    assert sorted(nodes) == [f'node{i}' for i in range(1, NODES + 1)]
    assert set(nodes.values()) <= {'idle', 'mixed', 'allocated'}, nodes
    names = srun(f'-N{NODES}', 'hostname').stdout.split()
    assert sorted(names) == [f'node{i}' for i in range(1, NODES + 1)]
    mark = f'ssb-{uuid.uuid4().hex}'
    for where in ('/tmp', LSCRATCH):
        path = os.path.join(where, mark)
        assert srun('-w', 'node1', 'touch', path).returncode == 0
        assert srun('-w', 'node1', 'test', '-e', path).returncode == 0
        assert srun('-w', 'node2', 'test', '-e', path).returncode != 0, f'{where} is shared'
        assert not os.path.exists(path), f'{where} of node1 is the host\'s'
    # The repository is shared, as a parallel file system is.
    assert srun('-w', 'node2', 'test', '-f', os.path.join(REPO, 'setup.cfg')).returncode == 0


def worker_summaries(stagedir):
    """Every worker's SSB-SUMMARY: worker 0 on the job's stdout, the others in their files."""
    found = []
    for path in [os.path.join(stagedir, 'rfm_job.out'),
                 *glob.glob(os.path.join(stagedir, 'ssb-worker-*.log'))]:
        with open(path) as f:
            found += [json.loads(line.split(' ', 1)[1]) for line in f
                      if line.startswith('SSB-SUMMARY ')]
    return found


@pytest.fixture(scope='module')
def multinode_run(shared_tmp_factory):
    """The issue's command as written, kept stage files aside: both variants at 1, 2 and 3
    nodes (the single runs come in as the multi-node runs' dependencies)."""
    cwd = shared_tmp_factory.mktemp('multinode')
    proc = run_reframe('-C', CI_CONFIG, '-r', '-t', 'multinode', *SMALL, '--keep-stage-files',
                       cwd=cwd, env=cluster_env(cwd))
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    (perflog,) = glob.glob(os.path.join(cwd, 'perflogs', 'ci', 'cpu', 'TrainingTest.log'))
    return cwd, read_perflog(perflog)


def test_both_variants_train_across_two_and_three_nodes(multinode_run):
    cwd, records = multinode_run
    runs = {(r['variant'], r['scale']): r for r in records}
    scales = ['single'] + [f'{n}nodes' for n in (2, 3, 4) if n <= NODES]
    assert set(runs) == {(v, s) for v in ('lrfs', 'hrvs') for s in scales}
    for (_, scale), r in runs.items():
        nodes = 1 if scale == 'single' else int(scale[0])
        assert r['result'] == 'pass' and r['jobid'].isdigit()
        assert r['num_tasks'] == str(nodes)                   # one rank per node
        assert len(set(r['job_nodelist'].split(','))) == nodes
        stagedir = glob.glob(os.path.join(cwd, 'stage', 'ci', 'cpu', 'tensorflow',
                                          r['short_name']))[0]
        with open(os.path.join(stagedir, 'rfm_job.sh')) as f:
            script = f.read()
        for line in ('#SBATCH --exclusive', '#SBATCH --no-requeue', f'--ntasks={nodes}',
                     '--ntasks-per-node=1', 'module load size-shape-bench/ci',
                     '\nsrun python3 -m payload'):
            assert line in script, (line, script)
        summaries = worker_summaries(stagedir)
        assert sorted(s['worker'] for s in summaries) == list(range(nodes))
        # Each rank on a host of its own, the ones Slurm gave the job; each staged its share
        # to the node-local scratch (each node's own: test_nodes_have_names_...).
        assert sorted(s['host'] for s in summaries) == sorted(r['job_nodelist'].split(','))
        assert {s['stage_dir'] for s in summaries} == {LSCRATCH}
        # Each rank took its own node's timing lock (in that node's /tmp).
        assert all(s['timing_lock'].endswith(f'/{s["host"]}.lock') for s in summaries)
        assert all(s['stage_bytes'] > 0 for s in summaries)
        assert len({s['steps_per_epoch'] for s in summaries}) == 1
        assert float(r['timed_start_unix']) < float(r['timed_end_unix'])


def test_parallel_efficiency_against_the_single_node_run(multinode_run):
    for r in multinode_run[1]:
        assert r['parallel_efficiency_unit'] == 'fraction'
        if r['scale'] == 'single':
            assert float(r['parallel_efficiency_value']) == 1.0
        else:   # N ranks sharing two cores: far below 1, never above it
            assert 0.05 < float(r['parallel_efficiency_value']) < 1.0


def test_jobs_overlap_in_time(multinode_run):
    """Experiment parallelism: ReFrame's async policy keeps several Slurm jobs in flight."""
    intervals = sorted(slurm_interval(r['jobid']) for r in multinode_run[1])
    overlaps = [(a, b) for i, a in enumerate(intervals) for b in intervals[i + 1:]
                if b[0] < a[1]]
    assert overlaps, intervals


@pytest.fixture(scope='module')
def users_reach_the_suite(slurm):
    """The cluster's users may run this checkout and virtualenv: search permission on the
    directories above them that others cannot search, granted with ACLs, taken back after."""
    paths = {REPO, sys.prefix, os.path.realpath(sys.executable), sys.base_prefix}
    granted = []
    for user in USERS:
        pwd.getpwnam(user)
        for path in paths:
            parent = os.path.dirname(path)
            while parent != '/':
                if not os.stat(parent).st_mode & stat.S_IXOTH:
                    subprocess.run(['setfacl', '-m', f'u:{user}:x', parent], check=True)
                    granted.append((user, parent))
                parent = os.path.dirname(parent)
    yield
    for user, path in granted:
        subprocess.run(['setfacl', '-x', f'u:{user}', path], check=False)


def as_user(user, workdir, *reframe_args):
    """``reframe -C ci.py ...`` as ``user`` from ``workdir``, in a login-like environment."""
    home = pwd.getpwnam(user).pw_dir
    reframe = os.path.join(os.path.dirname(sys.executable), 'reframe')
    command = ('. /usr/share/lmod/lmod/init/bash && cd "$1" && shift && exec "$@"')
    return subprocess.Popen(
        ['runuser', '-u', user, '--', 'env', '-i', f'HOME={home}', f'USER={user}',
         f'PATH={os.path.dirname(sys.executable)}:/usr/bin:/bin', f'SSB_VENV={sys.prefix}',
         f'RFM_SQLITE_DB_FILE={workdir}/results.db', 'bash', '-c', command, 'as_user',
         str(workdir), reframe, '-C', CI_CONFIG, '-c', os.path.join(REPO, 'reframe_tests'),
         *reframe_args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_two_users_never_time_on_one_node_at_once(users_reach_the_suite, shared_tmp_factory):
    """Two users submit a timed test to every node at the same time (it spans all of them);
    each timing lock is per user, so what keeps their timed windows apart is the tests'
    whole-node request."""
    everywhere = max(n for n in (2, 3, 4) if n <= NODES)
    runs = {}
    for user in USERS:
        workdir = shared_tmp_factory.mktemp(user)
        os.chown(workdir, pwd.getpwnam(user).pw_uid, -1)
        runs[user] = workdir, as_user(user, workdir, '-r', '-n',
                                      f'TrainingTest.*lrfs.*scale={everywhere}nodes', *SMALL,
                                      '-S', 'parallel_efficiency=false')
    windows = []            # (start, end, user)
    for user, (workdir, proc) in runs.items():
        out, _ = proc.communicate(timeout=900)
        assert proc.returncode == 0, out[-5000:]
        (perflog,) = glob.glob(os.path.join(workdir, 'perflogs', 'ci', 'cpu',
                                            'TrainingTest.log'))
        for r in read_perflog(perflog):
            assert len(r['job_nodelist'].split(',')) == everywhere == NODES
            windows.append((float(r['timed_start_unix']), float(r['timed_end_unix']), user))
    assert sorted(w[2] for w in windows) == sorted(USERS)
    windows.sort()
    for before, after in zip(windows, windows[1:]):
        assert before[1] <= after[0], f'{before} overlaps {after} on the same nodes'
