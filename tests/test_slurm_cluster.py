"""The suite through a real Slurm cluster with Lmod modules (site_configs/ci.py).

.ci/run starts the single-node cluster (.ci/cluster/start) and sets SSB_REQUIRE_SLURM=1,
so that there a missing cluster fails these tests instead of skipping them.
"""
import datetime
import glob
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import CI_CONFIG, REPO
from reframe_runs import REFRAME, read_perflog, run_reframe



def cluster_env(tmp_path):
    # The CI module loads this virtualenv: the one running the tests.
    return {'SSB_VENV': sys.prefix, 'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db')}


def slurm_interval(jobid):
    out = subprocess.run(['sacct', '-j', jobid, '-X', '-n', '-P', '-o', 'Start,End'],
                         capture_output=True, text=True, check=True).stdout.split()[0]
    return [datetime.datetime.fromisoformat(t) for t in out.split('|')]


@pytest.fixture(scope='module')
def cluster_run(slurm, tmp_path_factory):
    cwd = tmp_path_factory.mktemp('slurm')
    proc = run_reframe('-r', '-n', '(TrainingTest|SizeShapeGap).*scale=(single|node)',
                       config=CI_CONFIG, cwd=cwd,
                       env=cluster_env(cwd))
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    (perflog,) = glob.glob(os.path.join(cwd, 'perflogs', 'ci', 'cpu', 'TrainingTest.log'))
    return cwd, read_perflog(perflog)


def test_both_variants_at_two_scales_through_slurm(cluster_run):
    cwd, records = cluster_run
    runs = {(r['variant'], r['scale']): r for r in records}
    assert set(runs) == {(v, s) for v in ('lrfs', 'hrvs') for s in ('single', 'node')}
    for (_, scale), r in runs.items():
        assert r['result'] == 'pass'
        assert r['jobid'].isdigit(), r['jobid']            # a Slurm job, not a local process
        assert r['job_nodelist'] not in ('', '[]', 'null')
        assert r['environ'] == 'tensorflow'
        with open(os.path.join(cwd, 'output', 'ci', 'cpu', 'tensorflow', r['short_name'],
                               'rfm_job.sh')) as f:
            script = f.read()
        assert 'module load size-shape-bench/ci' in script     # through Lmod
        assert f'#SBATCH --ntasks={r["num_tasks"]}' in script
        assert '\nsrun python3 -m payload' in script
        assert float(r['steady_epoch_time_value']) > 0 and float(r['host_peak_memory_value']) > 0
        assert r['num_tasks'] == ('1' if scale == 'single' else '2')


def test_two_workers_report_efficiency(cluster_run):
    for r in cluster_run[1]:
        if r['scale'] == 'node':
            # Two workers on the node's two cores against one worker on both. Above 1 is
            # real here: smallcnn's ops are too small for one process's intra-op threads
            # to fill two cores, which two processes do (LR&FS measured 1.52 once the
            # epochs stopped paying for an iterator release each).
            assert 0.05 < float(r['parallel_efficiency_value']) < 2.5
            assert r['parallel_efficiency_unit'] == 'fraction'


def test_jobs_overlap_in_time(cluster_run):
    """Experiment parallelism: ReFrame's async policy keeps several Slurm jobs in flight."""
    intervals = sorted(slurm_interval(r['jobid']) for r in cluster_run[1])
    overlaps = [(a, b) for i, a in enumerate(intervals) for b in intervals[i + 1:]
                if b[0] < a[1]]
    assert overlaps, intervals


def worker_pids(task):
    """Payload processes of Slurm task ``task`` on this node."""
    pids = []
    for environ in glob.glob('/proc/[0-9]*/environ'):
        try:
            with open(environ, 'rb') as f:
                env = f.read().split(b'\0')
            with open(environ.replace('environ', 'cmdline'), 'rb') as f:
                cmdline = f.read()
        except OSError:
            continue
        if b'payload' in cmdline and f'SLURM_PROCID={task}'.encode() in env:
            pids.append(int(environ.split('/')[2]))
    return pids


def test_killed_worker_fails_the_job_with_a_reason(slurm, tmp_path):
    env = dict({k: v for k, v in os.environ.items() if not k.startswith('RFM_')},
               **cluster_env(tmp_path))
    rfm = subprocess.Popen([REFRAME, '-C', CI_CONFIG, '-c', os.path.join(REPO, 'reframe_tests'),
                            '-r', '-n', 'TrainingTest.*variant=hrvs.*scale=node',
                            '-S', 'epochs=300',
                            '-S', 'parallel_efficiency=false', '-S', 'time_limit=10m'],
                           cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600
        victims = []
        while not victims:     # kill worker 1 once it has finished an epoch
            assert rfm.poll() is None and time.monotonic() < deadline, 'the 2-worker job never ran'
            time.sleep(1)
            records = glob.glob(str(tmp_path / 'stage/ci/cpu/tensorflow/TrainingTest_*/'
                                    'ssb-worker-1.log'))
            if any('SSB-EPOCH' in open(r).read() for r in records):
                victims = worker_pids(1)
        for pid in victims:
            os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        out, _ = rfm.communicate(timeout=300)
    finally:
        if rfm.poll() is None:
            rfm.kill()
    assert time.monotonic() - killed < 180, 'the job hung after a worker died'
    assert rfm.returncode != 0
    reasons = [line for line in out.splitlines() if '* Reason:' in line]
    assert any('another worker died or stopped answering' in r for r in reasons), out[-4000:]


def missing_module_config(tmp_path):
    """The CI site whose environment loads a module the cluster does not have."""
    config = tmp_path / 'missing_module.py'
    config.write_text(f'''import importlib.util
spec = importlib.util.spec_from_file_location('ci_site', {CI_CONFIG!r})
ci = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ci)
site_configuration = ci.site_configuration
for environ in site_configuration['environments']:
    environ['modules'] = ['size-shape-bench/no-such-version']
''')
    return config


def test_missing_module_is_named(slurm, tmp_path):
    """A site environment that loads a module the cluster does not have fails, naming it."""
    config = missing_module_config(tmp_path)
    proc = run_reframe('-r', '-n', 'TrainingTest.*variant=lrfs.*scale=single', config=config,
                       cwd=tmp_path,
                       env=cluster_env(tmp_path))
    assert proc.returncode != 0
    reasons = [line for line in proc.stdout.splitlines() if '* Reason:' in line]
    assert reasons and 'environ error: could not execute module operation' in reasons[0]
    assert 'size-shape-bench/no-such-version' in reasons[0]
    assert 'Failed to find the following module(s)' in proc.stdout
