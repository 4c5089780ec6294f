"""Write a file or a directory under a temporary name, and rename it into place when complete.

An interrupted writer leaves nothing that looks complete, and an existing path
is never overwritten unless the caller says so (``overwrite=True``: replaced in
one rename, never left half-written). The one helper of every writer in the
suite: datasets, packed and prepared files, reference files.
"""
import contextlib
import os
import shutil
import socket
import tempfile

PARTIAL = '.partial-'


def _parent_of(path, overwrite=False):
    if os.path.islink(path):
        # Replacing it would silently cut the link to the file it points at.
        raise OSError(f'{path!r} is a symbolic link (to {os.readlink(path)!r}); refusing to '
                      f'replace it: write to its target, or remove the link')
    if os.path.exists(path) and not overwrite:
        raise FileExistsError(f'{path!r} already exists; refusing to overwrite it')
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    return parent


def umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:            # another user's: alive
        pass
    return True


def tag(prefix):
    """A name prefix that says which process made it: ``<prefix><host>@<pid>-`` ('@' is in
    no host name: host ``node``'s tags never match those of ``node-2``)."""
    return f'{prefix}{socket.gethostname()}@{os.getpid()}-'


def clean_stale(parent, prefix):
    """Remove what killed processes of this host left under ``parent`` with ``prefix``
    (made by ``tag``): a killed writer cannot clean up after itself."""
    mine = f'{prefix}{socket.gethostname()}@'
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        pid = name[len(mine):].split('-', 1)[0]
        if name.startswith(mine) and pid.isdigit() and not _alive(int(pid)):
            path = os.path.join(parent, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.remove(path)


def private_dir(parent, prefix):
    """A new directory of this process's own under ``parent``, after clean_stale."""
    clean_stale(parent, prefix)
    return tempfile.mkdtemp(prefix=tag(prefix), dir=parent)


@contextlib.contextmanager
def directory(path):
    """Yield a temporary sibling directory of ``path``; renamed to ``path`` on success."""
    tmp = private_dir(_parent_of(path), PARTIAL)
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~umask())        # mkdtemp made it private to its owner
        os.rename(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@contextlib.contextmanager
def file(path, suffix='', overwrite=False):
    """Yield a temporary sibling file name of ``path``; renamed to ``path`` on success."""
    parent = _parent_of(path, overwrite)
    clean_stale(parent, PARTIAL)
    fd, tmp = tempfile.mkstemp(prefix=tag(PARTIAL), suffix=suffix, dir=parent)
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~umask())        # mkstemp made it private to its owner
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
