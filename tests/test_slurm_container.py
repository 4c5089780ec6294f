"""Both variants and the gap in the suite's image through the CI Slurm cluster
(site_configs/ci.py declares Charliecloud on its partition): sbatch, then srun ch-run on
the compute nodes, the data and each node's own scratch mounted in the image."""
import glob
import os
import shutil
import sys
import tempfile

import pytest
from conftest import CI_CONFIG
from reframe_runs import read_perflog, run_reframe

# The nodes share this directory with the submitting host; each has its own /tmp.
SHARED = os.path.join(os.environ.get('SSB_SLURM_DIR', '/var/lib/ssb-slurm'), 'shared')


@pytest.fixture
def shared_dir():
    os.makedirs(SHARED, exist_ok=True)
    path = tempfile.mkdtemp(prefix='container-', dir=SHARED)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_both_variants_and_the_gap_in_the_image_through_slurm(slurm, suite_image, shared_dir):
    path, digest = suite_image
    env = {'SSB_VENV': sys.prefix, 'RFM_COLORIZE': 'n',
           'RFM_SQLITE_DB_FILE': os.path.join(shared_dir, 'results.db')}
    # The nodes share this machine's cores, the runs of two nodes each other's: functional
    # proof, not figures (the gap's noise limit is not for them).
    proc = run_reframe('-r', '-t', 'container', '-n', '(TrainingTest|SizeShapeGap).*single',
                       '-S', f'container_image={path}', '-S', 'TrainingTest.epochs=3',
                       '-S', 'SyntheticMAMe.images_per_class=1',
                       '--skip-performance-check', config=CI_CONFIG, cwd=shared_dir, env=env)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    perflogs = os.path.join(shared_dir, 'perflogs', 'ci', 'cpu')
    runs = read_perflog(os.path.join(perflogs, 'TrainingTest.log'))
    assert sorted(r['variant'] for r in runs) == ['hrvs', 'lrfs']
    for r in runs + read_perflog(os.path.join(perflogs, 'SizeShapeGap.log')):
        assert r['result'] == 'pass'
        assert (r['container_runtime'], r['container_detected']) == ('Charliecloud',
                                                                     'charliecloud'), r
        assert (r['container_image'], r['container_image_digest']) == (path, digest), r
    for r in runs:
        assert r['jobid'].isdigit() and r['job_nodelist'].startswith('node'), r
        (out,) = glob.glob(os.path.join(shared_dir, 'output', 'ci', 'cpu', 'tensorflow',
                                        r['short_name'], 'rfm_job.out'))
        with open(os.path.join(os.path.dirname(out), 'rfm_job.sh')) as f:
            script = f.read()
        assert '\nsrun ch-run --set-env ' in script and f' {path} -- python3 -m payload ' in script
        # Staged to the node's own scratch, mounted in the image.
        assert ' --stage-dir /mnt/1 ' in script
        with open(out) as f:
            summary = f.read()
        assert f'"container_evidence": "/ is {path} of ' in summary
        assert '"host": "node' in summary
