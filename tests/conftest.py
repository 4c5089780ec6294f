import itertools
import json
import logging
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import types

import numpy as np
import pytest

from sizeshape_datasets import mame, synthetic

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The suite's container image, once per session (tests/container_image.py).
pytest_plugins = ['container_image']
CI_CONFIG = os.path.join(REPO, 'site_configs', 'ci.py')
# The CI cluster's directory (.ci/cluster/common.sh). Its nodes each have their own /tmp, so
# a test that runs jobs there works in its shared/ part, which every node sees as the host does.
CLUSTER_DIR = os.environ.get('SSB_SLURM_DIR', '/var/lib/ssb-slurm')


def make_dataset(path, images_per_class=1, **kwargs):
    kwargs.setdefault('val_per_class', 0)
    return synthetic.generate(str(path), images_per_class=images_per_class, **kwargs)


def image_path(root, n):
    """The path of the ``n``-th image listed in a MAMe-layout root (names end in .jpg
    or .jpeg, as in the published dataset)."""
    return os.path.join(root, mame.IMAGE_DIR, mame.read_metadata(root)[n].image_file)


# Rows in the form of the published MAMe_dataset.csv, one per quirk: the medium
# 'Woven fabric ' with its trailing space, a Cleveland file name with dots ending in
# .jpeg, a quoted instance ID with a comma, and an image above Pillow's
# decompression-bomb limit (178,956,970 px; MAMe's largest has 373 Mpx).
QUIRKS_CSV = ','.join(mame.COLUMNS) + '\n' + '\n'.join([
    '0.jpg,Woven fabric ,Metropolitan Museum of Art,1927.117,train,5000.0,4000.0,20000000.0,1.25',
    '1949.565.5.jpeg,Oil on canvas,The Cleveland Museum of Art,1949.565.5,train,21871.0,'
    '14951.0,326993321.0,1.4629',
    '2.jpg,Graphite,Metropolitan Museum of Art,"1984.433.193a, b",train,13400.0,13400.0,'
    '179560000.0,1.0',
    '3.jpg,Woven fabric ,Los Angeles County Museum of Art,M.2007.211.1,val,300.0,200.0,'
    '60000.0,1.5',
]) + '\n'
BOMB_SIDE = 13400          # 179.6 Mpx: above Pillow's limit


def make_quirky_root(root):
    """A MAMe-layout root with the published file's quirks and real JPEGs, the one above
    Pillow's limit included (flat grey: 2 MB)."""
    from PIL import Image
    os.makedirs(os.path.join(root, mame.IMAGE_DIR))
    with open(os.path.join(root, mame.METADATA_FILE), 'w') as f:
        f.write(QUIRKS_CSV)
    with open(os.path.join(root, mame.LABELS_FILE), 'w') as f:
        f.writelines(f'{i},{name}\n' for i, name in enumerate(synthetic.MEDIUMS))
    rng = np.random.default_rng(0)
    for name, (w, h) in (('0.jpg', (250, 200)), ('1949.565.5.jpeg', (219, 150)),
                         ('3.jpg', (300, 200))):
        Image.fromarray(synthetic.class_image(3, w, h, rng, 29)).save(
            os.path.join(root, mame.IMAGE_DIR, name))
    with mame.no_pixel_limit():
        Image.new('L', (BOMB_SIDE, BOMB_SIDE), 128).save(
            os.path.join(root, mame.IMAGE_DIR, '2.jpg'), quality=90)
    return str(root)


@pytest.fixture(scope='session')
def default_run(tmp_path_factory):
    """The README's first command as written, ``reframe -c reframe_tests -r``, in a fresh
    directory (tests/test_reframe_generic.py; tests/test_gap.py builds on its perflogs)."""
    from reframe_runs import run_reframe
    cwd = tmp_path_factory.mktemp('rfm')
    proc = run_reframe('-r', cwd=cwd)
    assert proc.returncode == 0, proc.stdout[-5000:]
    return cwd, proc


@pytest.fixture(scope='session')
def tiny_dataset(tmp_path_factory):
    """29 training images (one per class), MAMe layout, small shapes."""
    return make_dataset(tmp_path_factory.mktemp('data') / 'mame')


def run_payload(*args, timeout=600):
    return subprocess.run([sys.executable, '-m', 'payload', *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO)


def payload_records(proc, tag):
    return [json.loads(line.split(' ', 1)[1]) for line in proc.stdout.splitlines()
            if line.startswith(tag + ' ')]


def train(data_dir, *args):
    """(epoch records, summary) of a payload run that must succeed."""
    proc = run_payload('--data-dir', data_dir, *args)
    assert proc.returncode == 0, proc.stderr
    epochs, (summary,) = payload_records(proc, 'SSB-EPOCH'), payload_records(proc, 'SSB-SUMMARY')
    return epochs, summary


# One run of each variant from the files, shared by the tests that read it (each payload run
# starts TensorFlow: several seconds). HR&VS's data lie under a path with spaces.
LRFS_RUN = ['--variant', 'lrfs', '--epochs', '3', '--batch-size', '8', '--image-size', '64',
            '--crop-size', '56']
HRVS_RUN = ['--variant', 'hrvs', '--epochs', '2', '--pixel-budget', '8k']


@pytest.fixture(scope='session')
def lrfs_run(tiny_dataset):
    return train(tiny_dataset, *LRFS_RUN)


@pytest.fixture(scope='session')
def spaced_dataset(tiny_dataset, tmp_path_factory):
    spaced = tmp_path_factory.mktemp('spaced') / 'my data dir' / 'MAMe copy'
    shutil.copytree(tiny_dataset, spaced)
    return spaced


@pytest.fixture(scope='session')
def hrvs_run(spaced_dataset):
    return train(spaced_dataset, *HRVS_RUN)


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


class SharedTmp:
    """Numbered directories under ``base``, as pytest's ``tmp_path_factory.mktemp``."""

    def __init__(self, base):
        self.base, self._numbers = base, itertools.count()

    def mktemp(self, name):
        path = self.base / f'{name}{next(self._numbers)}'
        path.mkdir()
        return path


@pytest.fixture(scope='session')
def shared_tmp_factory(slurm, request):
    """Working directories on the cluster's shared file system (not /tmp, which each node
    has its own of), removed at the end of a session where every test passed."""
    base = tempfile.mkdtemp(prefix='pytest-', dir=os.path.join(CLUSTER_DIR, 'shared'))
    os.chmod(base, 0o755)           # the cluster's users work in directories of their own here
    yield SharedTmp(pathlib.Path(base))
    if request.session.testsfailed:
        print(f'\nkept for a look: {base}')
    else:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def shared_tmp_path(shared_tmp_factory, request):
    return shared_tmp_factory.mktemp(request.node.name[:40].replace('[', '-').strip(']'))


def stand_in_test(class_name, display_name, **values):
    """What the tests' reference hook (reframe_tests/references.py) reads of a test: its
    variables, and where it runs (generic:default, builtin)."""
    test = type(class_name, (), values)()
    test.current_system = types.SimpleNamespace(name='generic')
    test.current_partition = types.SimpleNamespace(fullname='generic:default')
    test.current_environ = types.SimpleNamespace(name='builtin')
    test.display_name = display_name
    test.logger = logging.getLogger('size-shape-bench.test')       # as ReFrame's test.logger
    return test


@pytest.fixture
def perflog_dir(tmp_path):
    """perflogs/generic/default/TrainingTest.log with 3 LR&FS and 3 HR&VS runs."""
    from reference_runs import STEADY, record, write_perflog
    recs = [record(s, i) for i, s in enumerate(STEADY)]
    recs += [record(2 * s, 10 + i, variant='hrvs') for i, s in enumerate(STEADY)]
    write_perflog(tmp_path / 'perflogs' / 'generic' / 'default' / 'TrainingTest.log', recs)
    return tmp_path / 'perflogs'


def python_files():
    """The repository's own Python files (git's list: no build/ or virtualenv copies)."""
    out = subprocess.run(['git', 'ls-files', '*.py'], cwd=REPO, capture_output=True, text=True,
                         check=True).stdout.split()
    return [os.path.join(REPO, f) for f in out]
