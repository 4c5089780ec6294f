"""Files in shared directories, which other people and scheduled jobs write too: read only
regular files (a FIFO would hang the reader forever, a device read endlessly), let one writer
at a time read-modify-write a file (a lock opened without following links), and keep copies
complete or absent (written under a temporary name, fsynced, linked into place).

``atomic.py`` writes the new file itself; this module is what the writers around it share.
"""
import contextlib
import errno
import fcntl
import itertools
import os
import shutil
import socket
import stat
import tempfile
import time

from ssb_common import atomic

# How long a writer waits for another's lock: an update holds it for a second or two, so
# waiting longer means the holder is stuck, and cron must hear about it, not hang.
LOCK_WAIT_S = 300

_KINDS = ((stat.S_ISFIFO, 'a FIFO (named pipe)'), (stat.S_ISSOCK, 'a socket'),
          (stat.S_ISCHR, 'a character device'), (stat.S_ISBLK, 'a block device'),
          (stat.S_ISDIR, 'a directory'), (stat.S_ISLNK, 'a symbolic link'))


class NotRegularFile(OSError):
    """A path that must be a regular file is something else."""


class LockTimeout(OSError):
    """Another writer held the lock for longer than LOCK_WAIT_S."""


def kind(mode):
    return next((text for test, text in _KINDS if test(mode)), 'not a regular file')


def open_regular(path, mode='r', follow=True, **kwargs):
    """``open(path, mode)`` for reading, refusing anything but a regular file, before a
    single byte is read (links are followed, a link to a regular file being one, unless
    ``follow`` is false: then a link is refused too)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        if err.errno == errno.ELOOP and not follow:
            raise NotRegularFile(f'{path} is a symbolic link: refusing to follow it') from None
        if err.errno != errno.ENXIO:              # ENXIO: opening a socket
            raise
        raise NotRegularFile(f'{path} is {kind(os.stat(path).st_mode)}, not a regular file: '
                             f'refusing to read it') from None
    try:
        mode_bits = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode_bits):
            raise NotRegularFile(f'{path} is {kind(mode_bits)}, not a regular file: refusing '
                                 f'to read it')
        os.set_blocking(fd, True)
        return os.fdopen(fd, mode, **kwargs)
    except BaseException:
        os.close(fd)
        raise


def require_regular(path):
    """Refuse ``path`` if it is there and not a regular file (for files that another program,
    SQLite or ReFrame, opens: a FIFO would hang it)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise NotRegularFile(f'{path} is {kind(mode)}, not a regular file: refusing to use it')


def read_text(path):
    with open_regular(path) as f:
        return f.read()


def own_subdir(path):
    """Make the directory ``path`` or take the one there, refusing a link someone planted
    (writing in it would write wherever the link points) and anything not a directory."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path)
    mode = os.lstat(path).st_mode
    if not stat.S_ISDIR(mode):
        raise NotRegularFile(f'{path} is {kind(mode)}, not a directory: refusing to write in it '
                             f'(remove it)')
    return path


def own_dir(path, follow=False):
    """Make the directory ``path`` or check the one there: the files written in it must not
    be links that another user planted (output directories are often shared). Refused: a
    symbolic link (unless ``follow``: the directory the user named), anything not a
    directory, and a directory every user may write to without the sticky bit."""
    os.makedirs(path, exist_ok=True)
    st = os.stat(path) if follow else os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise NotRegularFile(f'{path} is a symbolic link: refusing to follow it (remove it)')
    if not stat.S_ISDIR(st.st_mode):
        raise NotRegularFile(f'{path} is not a directory')
    if st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
        raise NotRegularFile(f'{path} is writable by every user and has no sticky bit: anyone '
                             f'could plant links in it; chmod o-w (or +t) it first')
    return path


@contextlib.contextmanager
def published(out):
    """Yield a new private directory in ``out`` to write files in; when the block succeeds,
    each is renamed into ``out``: a link planted there under its name is replaced, never
    written through, and a failed block leaves nothing."""
    tmp = atomic.private_dir(out, atomic.PARTIAL)
    try:
        yield tmp
        for name in os.listdir(tmp):
            os.replace(os.path.join(tmp, name), os.path.join(out, name))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def lock_path(path):
    return os.path.join(os.path.dirname(os.path.abspath(path)),
                        f'.{os.path.basename(path)}.lock')


def _open_lock(lock):
    flags = os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        try:
            fd = os.open(lock, os.O_RDWR | flags, 0o666)
        except PermissionError:                    # another user's lock file: read-only will do
            fd = os.open(lock, os.O_RDONLY | flags)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise NotRegularFile(f'{lock} is a symbolic link: refusing to follow it '
                                 f'(remove it)') from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotRegularFile(f'{lock} is {kind(mode)}, not a regular file (remove it)')
    return fd


@contextlib.contextmanager
def locked(path, wait=LOCK_WAIT_S):
    """Hold the lock of ``path`` (``.<name>.lock`` beside it): read the file, change it and
    write it back inside, and no other writer's change is lost. Waits ``wait`` seconds at
    most, then LockTimeout names the holder."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    lock = lock_path(path)
    fd = _open_lock(lock)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    holder = os.pread(fd, 200, 0).decode(errors='replace').strip()
                    raise LockTimeout(f'waited {wait} s for {lock}, held by '
                                      f'{holder or "an unknown process"}: is it stuck?') from None
                time.sleep(0.05)
        with contextlib.suppress(OSError):         # read-only: the holder stays unnamed
            os.ftruncate(fd, 0)
            os.pwrite(fd, f'pid {os.getpid()} on {socket.gethostname()} since '
                          f'{time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}\n'.encode(), 0)
        yield lock
    finally:
        os.close(fd)                               # releases the lock


def fsync_dir(path):
    """Make a rename in the directory ``path`` durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def copy_complete(src, dest_dir, names):
    """Copy ``src`` into ``dest_dir`` under the first of ``names`` not taken: written under a
    temporary name, fsynced, then linked to its name (never over another file), so the copy
    is complete or absent, whatever fails (a full disk) or whoever is killed."""
    atomic.clean_stale(dest_dir, atomic.PARTIAL)
    fd, tmp = tempfile.mkstemp(prefix=atomic.tag(atomic.PARTIAL), dir=dest_dir)
    try:
        with os.fdopen(fd, 'wb') as out, open_regular(src, 'rb') as f:
            while chunk := f.read(1 << 20):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o666 & ~atomic.umask())
        for name in names:
            try:
                os.link(tmp, os.path.join(dest_dir, name))
            except FileExistsError:
                continue
            fsync_dir(dest_dir)
            return os.path.join(dest_dir, name)
    finally:
        os.remove(tmp)


def numbered(stem, suffix):
    """``stem + suffix``, then ``stem.1 + suffix``, ``stem.2 + suffix``, ..."""
    yield stem + suffix
    for n in itertools.count(1):
        yield f'{stem}.{n}{suffix}'
