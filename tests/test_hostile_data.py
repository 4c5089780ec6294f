"""Malformed datasets and options through the real CLIs: one ``error:`` line and a non-zero
exit, never a traceback, never training on other data than the data asked for."""
import os
import shutil
import subprocess
import sys

import pytest
from conftest import REPO, make_dataset, payload_error

from ssb_common import atomic
from sizeshape_datasets import mame, stage


def cli(module, *args, cwd=REPO):
    return subprocess.run([sys.executable, '-m', module, *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def one_error(proc):
    assert 'Traceback' not in proc.stderr, proc.stderr
    return payload_error(proc)


@pytest.fixture(scope='module')
def root(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp('hostile') / 'mame')


def spoil(root, tmp_path, how):
    bad = str(tmp_path / 'bad')
    shutil.copytree(root, bad)
    how(bad)
    return bad


def append_row(image_file):
    def how(bad):
        with open(os.path.join(bad, mame.METADATA_FILE), 'a') as f:
            f.write(f'{image_file},Oil on canvas,x,y,train,1,1,1,1\n')
    return how


def replace_in(name, old, new):
    def how(bad):
        path = os.path.join(bad, name)
        with open(path, 'rb') as f:
            data = f.read()
        with open(path, 'wb') as f:
            f.write(data.replace(old, new, 1))
    return how


def as_directory(name):
    def how(bad):
        os.remove(os.path.join(bad, name))
        os.mkdir(os.path.join(bad, name))     # open() of it fails as a permission problem would
    return how


BROKEN = {
    'latin-1 metadata': (replace_in(mame.METADATA_FILE, b'Oil', b'\xd6l'),
                         f"{mame.METADATA_FILE}' is not UTF-8 text (byte 0xd6): save it as UTF-8"),
    'latin-1 labels': (replace_in(mame.LABELS_FILE, b'Oil', b'\xd6l'),
                       f"{mame.LABELS_FILE}' is not UTF-8 text (byte 0xd6): save it as UTF-8"),
    'image outside the root': (append_row('../../elsewhere/0.jpg'),
                               "\"Image file\" '../../elsewhere/0.jpg' is not a path inside data/"),
    'absolute image path': (append_row('/etc/hostname'),
                            "\"Image file\" '/etc/hostname' is not a path inside data/"),
    'huge field': (append_row('x' * 200_000),
                   'not CSV as expected: field larger than field limit'),
    'metadata is a directory': (as_directory(mame.METADATA_FILE), f'no {mame.METADATA_FILE} in'),
    'image is a directory': (as_directory(os.path.join(mame.IMAGE_DIR, '0.jpg')),
                             "0.jpg': [Errno 21] Is a directory"),
}


@pytest.mark.parametrize('name', BROKEN)
def test_a_broken_dataset_is_one_error_line(root, tmp_path, name):
    how, message = BROKEN[name]
    bad = spoil(root, tmp_path, how)
    line = one_error(cli('sizeshape_datasets', 'describe', bad))
    assert message in line, line


def test_the_payload_names_a_broken_dataset_before_training(root, tmp_path):
    bad = spoil(root, tmp_path, replace_in(mame.METADATA_FILE, b'Oil', b'\xd6l'))
    line = one_error(cli('payload', '--variant', 'lrfs', '--data-dir', bad))
    assert line.endswith(f"{mame.METADATA_FILE}' is not UTF-8 text (byte 0xd6): save it as "
                         f"UTF-8")


@pytest.mark.skipif(os.geteuid() == 0, reason='root reads files whatever their mode; the '
                    'same error path is covered by the directory-for-a-file cases')
def test_an_unreadable_data_directory_is_one_error_line(root, tmp_path):
    bad = spoil(root, tmp_path, lambda bad: os.chmod(bad, 0))
    try:
        line = one_error(cli('sizeshape_datasets', 'describe', bad))
    finally:
        os.chmod(bad, 0o755)
    assert line == f"error: cannot read data directory '{bad}': Permission denied"


def test_a_data_path_that_is_not_utf8_is_named(tmp_path):
    name = os.fsdecode(b'caf\xe9')
    proc = subprocess.run([sys.executable, '-m', 'sizeshape_datasets', 'describe',
                           os.fsencode(str(tmp_path / name))], cwd=REPO, capture_output=True,
                          text=True, errors='backslashreplace')
    assert one_error(proc).startswith('error: data directory ')


@pytest.mark.parametrize('args, message', [
    (['--learning-rate', 'nan'], '--learning-rate must be a finite number, got nan'),
    (['--learning-rate', '-0.1'], '--learning-rate must be at least 0, got -0.1'),
    (['--learning-rate', 'inf'], '--learning-rate must be a finite number, got inf'),
    (['--pixel-budget', '0.5'], "pixel budget '0.5' must be a finite number of at least 1024"),
    (['--pixel-budget', 'inf'], "pixel budget 'inf' must be a finite number"),
    (['--epochs', 'abc'], "argument --epochs: invalid int value: 'abc'"),
    (['--seed', '-1'], '--seed must be between 0 and 2**32 - 1, got -1'),
    (['--input-probe-seconds', 'nan'], '--input-probe-seconds must be a finite number'),
])
def test_nonsense_numbers_are_refused_by_the_payload(tmp_path, args, message):
    line = one_error(cli('payload', '--variant', 'hrvs', '--data-dir', tmp_path, *args))
    assert message in line, line


@pytest.mark.parametrize('args, message', [
    (['--scale', 'inf'], 'scale must be a finite number > 0'),
    (['--min-side', '0'], 'min_side must be >= 1'),
    (['--max-mpx', 'nan'], 'max_mpx must be a finite number > 0'),
])
def test_nonsense_numbers_are_refused_by_make(tmp_path, args, message):
    line = one_error(cli('sizeshape_datasets', 'make', '--out', tmp_path / 'd', *args))
    assert message in line, line
    assert not os.path.exists(tmp_path / 'd')


def test_staging_keeps_subdirectories_apart(root, tmp_path):
    # 'sub/0.jpg' and '0.jpg' staged by base name: one copy overwrote the other, and
    # training read the wrong bytes.
    def add_sub(bad):
        rows = mame.read_metadata(bad)
        os.mkdir(os.path.join(bad, mame.IMAGE_DIR, 'sub'))
        shutil.copy(os.path.join(bad, mame.IMAGE_DIR, rows[1].image_file),
                    os.path.join(bad, mame.IMAGE_DIR, 'sub', rows[0].image_file))
        append_row(f'sub/{rows[0].image_file}')(bad)
    bad = spoil(root, tmp_path, add_sub)
    records, _ = mame.read_mame(bad)
    scratch = tmp_path / 'scratch'
    scratch.mkdir()
    staged, info = stage.stage(records, str(scratch))
    try:
        assert len({s.path for s in staged}) == len(records)
        for original, copy in zip(records, staged):
            with open(original.path, 'rb') as a, open(copy.path, 'rb') as b:
                assert a.read() == b.read(), (original.path, copy.path)
    finally:
        shutil.rmtree(info['dir'])


def test_what_a_killed_writer_left_is_cleaned_at_the_next_start(tmp_path):
    dead = subprocess.run([sys.executable, '-c', 'import os; print(os.getpid())'],
                          capture_output=True, text=True).stdout.strip()
    host = os.uname().nodename
    left = [tmp_path / f'.partial-{host}@{dead}-abc', tmp_path / f'ssb-stage-{host}@{dead}-x']
    left[0].write_text('half a reference file')
    left[1].mkdir()
    (left[1] / 'img.jpg').write_text('half an image')
    alive = tmp_path / f'.partial-{host}@{os.getppid()}-abc'     # a running writer's
    alive.write_text('in progress')
    other = tmp_path / f'.partial-elsewhere@{dead}-abc'          # another node's
    other.write_text('not ours to judge')
    with atomic.file(str(tmp_path / 'refs.yaml')) as tmp, open(tmp, 'w') as f:
        f.write('new\n')
    made = stage.private_dir(str(tmp_path), 'ssb-stage-')
    assert sorted(os.listdir(tmp_path)) == sorted([alive.name, other.name, 'refs.yaml',
                                                   os.path.basename(made)])
