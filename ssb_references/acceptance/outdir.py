"""The ``--out`` directory of ssb-acceptance, often shared: directories checked before anything
is written in them, one run at a time (an exclusive lock that says who holds it), and each
finished report published in one rename, with DIR/latest pointing at it."""
import datetime
import fcntl
import os
import stat

from ssb_common.atomic import umask


class OutDirError(Exception):
    """The directory is not safe to write in, or another run holds it."""


def now():
    return datetime.datetime.now(datetime.timezone.utc)


def own_dir(path, follow=False):
    """Make the directory ``path`` or check the one there: the files this command writes in
    it must not be links that another user planted (``--out`` is often shared). Refused: a
    symbolic link (unless ``follow``: ``--out`` itself), anything not a directory, and a
    directory every user may write to without the sticky bit."""
    os.makedirs(path, exist_ok=True)
    st = os.stat(path) if follow else os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise OutDirError(f'{path} is a symbolic link: refusing to follow it (remove it)')
    if not stat.S_ISDIR(st.st_mode):
        raise OutDirError(f'{path} is not a directory')
    if st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
        raise OutDirError(f'{path} is writable by every user and has no sticky bit: anyone could '
                      f'plant links in it; chmod o-w (or +t) it first')
    return path


class Lock:
    """An exclusive lock on DIR/.lock; says who holds it when it is taken."""

    def __init__(self, out):
        self.path = os.path.join(out, '.lock')

    def __enter__(self):
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError:
            if os.path.islink(self.path):
                raise OutDirError(f'{self.path} is a symbolic link: refusing to follow it '
                              f'(remove it)') from None
            raise
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self.fd, 200, 0).decode(errors='replace').strip() or 'unknown'
            os.close(self.fd)
            raise OutDirError(f'another ssb-acceptance run holds {self.path} ({holder}); '
                          f'not starting a second one on the same --out') from None
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, f'pid {os.getpid()} on {os.uname().nodename}, since '
                           f'{now():%Y-%m-%dT%H:%M:%SZ}\n'.encode(), 0)
        return self

    def __exit__(self, *exc):
        os.close(self.fd)          # releases the lock


def publish(out, partial, stamp):
    """Move the finished report into place and point DIR/latest at it (both atomic)."""
    final = os.path.join(out, 'reports', stamp)
    os.chmod(partial, 0o777 & ~umask())        # mkdtemp made it private to its owner
    os.rename(partial, final)
    link = os.path.join(out, f'.latest-{os.getpid()}')
    os.symlink(os.path.relpath(final, out), link)
    os.replace(link, os.path.join(out, 'latest'))
    return final
