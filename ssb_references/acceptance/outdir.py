"""The ``--out`` directory of ssb-acceptance, often shared: directories checked before anything
is written in them, one run at a time (an exclusive lock that says who holds it), and each
finished report published in one rename, with DIR/latest pointing at it."""
import datetime
import fcntl
import os

from ssb_common.atomic import umask
# The checks of a directory to write in: ssb-references dashboard makes its own the same way.
from ssb_common.safe_dir import OutDirError, own_dir  # noqa: F401 (own_dir: command.py's)


def now():
    return datetime.datetime.now(datetime.timezone.utc)


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
