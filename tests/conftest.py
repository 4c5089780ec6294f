import os
import subprocess
import sys

import pytest

from sizeshape_datasets import mame, synthetic

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CI_CONFIG = os.path.join(REPO, 'site_configs', 'ci.py')


def make_dataset(path, images_per_class=1, **kwargs):
    kwargs.setdefault('val_per_class', 0)
    return synthetic.generate(str(path), images_per_class=images_per_class, **kwargs)


def image_path(root, n):
    """The path of the ``n``-th image listed in a MAMe-layout root (names end in .jpg
    or .jpeg, as in the published dataset)."""
    return os.path.join(root, mame.IMAGE_DIR, mame.read_metadata(root)[n].image_file)


@pytest.fixture(scope='session')
def tiny_dataset(tmp_path_factory):
    """29 training images (one per class), MAMe layout, small shapes."""
    return make_dataset(tmp_path_factory.mktemp('data') / 'mame')


def run_payload(*args, timeout=600):
    return subprocess.run([sys.executable, '-m', 'payload', *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO)


def payload_error(proc):
    """The single ``error: ...`` line a failed payload printed (and assert there is one)."""
    assert proc.returncode != 0, proc.stdout
    errors = [line for line in proc.stderr.splitlines() if line.startswith('error: ')]
    assert len(errors) == 1, proc.stderr
    return errors[0]


@pytest.fixture(scope='session')
def slurm():
    try:
        ok = all(subprocess.run(cmd, capture_output=True, timeout=30).returncode == 0
                 for cmd in (['sinfo', '-h'], ['sacct', '-a', '-n', '-X']))
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        message = 'no Slurm cluster with accounting here (start one with .ci/cluster/start)'
        if os.environ.get('SSB_REQUIRE_SLURM') == '1':
            pytest.fail(message)
        pytest.skip(message)
