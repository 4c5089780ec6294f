"""ssb_common/atomic.py: a path appears complete or not at all, and is never overwritten or
cut from its link target by accident."""
import os
import socket
import stat
import subprocess
import sys

import pytest

from ssb_common import atomic


def dead_pid():
    """The id of a process that has ended (and was reaped)."""
    proc = subprocess.run([sys.executable, '-c', 'import os; print(os.getpid())'],
                          capture_output=True, text=True, check=True)
    return int(proc.stdout)


def test_file_appears_only_when_the_writer_is_done(tmp_path):
    path = tmp_path / 'refs.yaml'
    with atomic.file(str(path), suffix='.tmp') as tmp:
        name = os.path.basename(tmp)
        assert os.path.dirname(tmp) == str(tmp_path)          # same file system: one rename
        assert name.startswith(f'.partial-{socket.gethostname()}@{os.getpid()}-')
        assert name.endswith('.tmp')
        with open(tmp, 'w') as f:
            f.write('done\n')
        assert not path.exists()
    assert path.read_text() == 'done\n'
    assert os.listdir(tmp_path) == ['refs.yaml']


def test_file_left_by_a_failing_writer_is_removed(tmp_path):
    path = tmp_path / 'refs.yaml'
    with pytest.raises(RuntimeError, match='disk full'), atomic.file(str(path)) as tmp:
        with open(tmp, 'w') as f:
            f.write('half')
        raise RuntimeError('disk full')
    assert os.listdir(tmp_path) == []


def test_file_writer_that_removed_its_temporary_fails_cleanly(tmp_path):
    # The rename fails; the error is the rename's, not a second one from the cleanup.
    with pytest.raises(FileNotFoundError), atomic.file(str(tmp_path / 'x')) as tmp:
        os.remove(tmp)
    assert os.listdir(tmp_path) == []


def test_file_refuses_to_overwrite_unless_asked(tmp_path):
    path = tmp_path / 'refs.yaml'
    path.write_text('old\n')
    with pytest.raises(FileExistsError, match=f"^'{path}' already exists; refusing to "
                                              f"overwrite it$"):
        with atomic.file(str(path)):
            pytest.fail('the body ran')
    assert path.read_text() == 'old\n'
    with atomic.file(str(path), overwrite=True) as tmp, open(tmp, 'w') as f:
        f.write('new\n')
    assert path.read_text() == 'new\n'


def test_file_overwrite_that_fails_keeps_the_old_content(tmp_path):
    path = tmp_path / 'refs.yaml'
    path.write_text('old\n')
    with pytest.raises(ValueError), atomic.file(str(path), overwrite=True) as tmp:
        with open(tmp, 'w') as f:
            f.write('ne')
        raise ValueError
    assert path.read_text() == 'old\n'
    assert os.listdir(tmp_path) == ['refs.yaml']


def test_symbolic_links_are_never_replaced(tmp_path):
    target = tmp_path / 'target.yaml'
    target.write_text('kept\n')
    link = tmp_path / 'link.yaml'
    link.symlink_to(target)
    dangling = tmp_path / 'dangling.yaml'
    dangling.symlink_to(tmp_path / 'nowhere')
    for path, points_at in ((link, target), (dangling, tmp_path / 'nowhere')):
        with pytest.raises(OSError, match=f"^'{path}' is a symbolic link \\(to '{points_at}'\\); "
                                          f"refusing to replace it"):
            with atomic.file(str(path), overwrite=True):
                pytest.fail('the body ran')
        assert path.is_symlink()
    assert target.read_text() == 'kept\n'


def test_missing_parents_are_made(tmp_path):
    path = tmp_path / 'a' / 'b' / 'refs.yaml'
    with atomic.file(str(path)) as tmp, open(tmp, 'w') as f:
        f.write('x')
    assert path.read_text() == 'x'


@pytest.mark.parametrize('mask', [0o022, 0o077])
def test_modes_follow_the_umask_not_mkstemp(tmp_path, mask):
    old = os.umask(mask)
    try:
        assert atomic.umask() == mask and atomic.umask() == mask      # read, not changed
        with atomic.file(str(tmp_path / 'f')) as tmp:
            pass
        with atomic.directory(str(tmp_path / 'd')):
            pass
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / 'f').st_mode) == 0o666 & ~mask
    assert stat.S_IMODE(os.stat(tmp_path / 'd').st_mode) == 0o777 & ~mask
    assert not os.path.exists(tmp)


def test_directory_appears_whole_or_not_at_all(tmp_path):
    out = tmp_path / 'dataset'
    with atomic.directory(str(out)) as tmp:
        assert os.path.basename(tmp).startswith(f'.partial-{socket.gethostname()}@{os.getpid()}-')
        (tmp_path / tmp / 'a.jpg').write_bytes(b'jpeg')
        assert not out.exists()
    assert os.listdir(out) == ['a.jpg'] and os.listdir(tmp_path) == ['dataset']

    with pytest.raises(KeyboardInterrupt), atomic.directory(str(tmp_path / 'other')) as tmp:
        (tmp_path / tmp / 'half.jpg').write_bytes(b'jp')
        raise KeyboardInterrupt
    assert os.listdir(tmp_path) == ['dataset']

    with pytest.raises(FileExistsError, match='already exists; refusing to overwrite it'):
        with atomic.directory(str(out)):
            pytest.fail('the body ran')
    assert os.listdir(out) == ['a.jpg']


def test_clean_stale_removes_only_this_hosts_dead_writers(tmp_path):
    host, dead = socket.gethostname(), dead_pid()
    stale_file = tmp_path / f'ssb-x-{host}@{dead}-abc'
    stale_file.write_text('half')
    stale_dir = tmp_path / f'ssb-x-{host}@{dead}-def'
    (stale_dir / 'sub').mkdir(parents=True)
    kept = [tmp_path / f'ssb-x-{host}@{os.getpid()}-abc',      # alive: this process
            tmp_path / f'ssb-x-other{host}@{dead}-abc',        # another host's
            tmp_path / f'ssb-x-{host}-2@{dead}-abc',           # host <host>-2's
            tmp_path / f'ssb-x-{host}@notapid-abc',            # not a tag of tag's
            tmp_path / f'ssb-y-{host}@{dead}-abc']             # another prefix
    for path in kept:
        path.write_text('keep')
    # A stale link goes, the directory it points at stays.
    outside = tmp_path / 'outside'
    outside.mkdir()
    (tmp_path / f'ssb-x-{host}@{dead}-link').symlink_to(outside)
    atomic.clean_stale(str(tmp_path), 'ssb-x-')
    assert sorted(os.listdir(tmp_path)) == sorted([p.name for p in kept] + ['outside'])


def test_clean_stale_of_a_missing_directory_does_nothing(tmp_path):
    atomic.clean_stale(str(tmp_path / 'missing'), 'ssb-x-')
    assert os.listdir(tmp_path) == []


def test_private_dir_is_new_and_this_process_s(tmp_path):
    stale = tmp_path / f'ssb-stage-{socket.gethostname()}@{dead_pid()}-old'
    stale.mkdir()
    made = [atomic.private_dir(str(tmp_path), 'ssb-stage-') for _ in range(2)]
    assert made[0] != made[1] and not stale.exists()
    for path in made:
        assert os.path.isdir(path) and os.path.dirname(path) == str(tmp_path)
        assert os.path.basename(path).startswith(
            f'ssb-stage-{socket.gethostname()}@{os.getpid()}-')
