"""Write a file or a directory under a temporary name, and rename it into place when complete.

An interrupted writer leaves nothing that looks complete, and an existing path
is never overwritten unless the caller says so (``overwrite=True``: replaced in
one rename, never left half-written). The one helper of every writer in the
suite: datasets, packed and prepared files, reference files.
"""
import contextlib
import os
import shutil
import tempfile


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


@contextlib.contextmanager
def directory(path):
    """Yield a temporary sibling directory of ``path``; renamed to ``path`` on success."""
    tmp = tempfile.mkdtemp(prefix='.partial-', dir=_parent_of(path))
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
    fd, tmp = tempfile.mkstemp(prefix='.partial-', suffix=suffix,
                               dir=_parent_of(path, overwrite))
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~umask())        # mkstemp made it private to its owner
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
