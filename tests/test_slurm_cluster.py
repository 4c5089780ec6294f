"""The suite through the CI Slurm cluster with Lmod modules (site_configs/ci.py): what every
cluster test shares, and a site whose module is missing.

.ci/run starts the cluster (.ci/cluster/start) and sets SSB_REQUIRE_SLURM=1, so that there a
missing cluster fails these tests instead of skipping them. Its nodes each have their own
/tmp: a test that runs jobs works in ``shared_tmp_path`` (conftest.py), never in tmp_path.
test_multinode.py trains across its nodes; test_node_failure.py fails them.
"""
import datetime
import glob
import subprocess
import sys

from conftest import CI_CONFIG
from reframe_runs import run_reframe


def cluster_env(workdir):
    # The CI module loads this virtualenv: the one running the tests.
    return {'SSB_VENV': sys.prefix, 'RFM_SQLITE_DB_FILE': str(workdir / 'results.db')}


def slurm_interval(jobid):
    out = subprocess.run(['sacct', '-j', jobid, '-X', '-n', '-P', '-o', 'Start,End'],
                         capture_output=True, text=True, check=True).stdout.split()[0]
    return [datetime.datetime.fromisoformat(t) for t in out.split('|')]


def worker_pids(task):
    """Payload processes of Slurm task ``task``, on whichever node runs it (the nodes have
    network, UTS and mount namespaces of their own, not process ones: the host sees them)."""
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


def test_missing_module_is_named(shared_tmp_path):
    """A site environment that loads a module the cluster does not have fails, naming it."""
    config = missing_module_config(shared_tmp_path)
    proc = run_reframe('-r', '-n', 'TrainingTest.*variant=lrfs.*scale=single', config=config,
                       cwd=shared_tmp_path, env=cluster_env(shared_tmp_path))
    assert proc.returncode != 0
    reasons = [line for line in proc.stdout.splitlines() if '* Reason:' in line]
    assert reasons and 'environ error: could not execute module operation' in reasons[0]
    assert 'size-shape-bench/no-such-version' in reasons[0]
    assert 'Failed to find the following module(s)' in proc.stdout
