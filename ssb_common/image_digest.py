"""The digest of a container image on disk, the same wherever it is computed: ssb-container
prints it when it builds an image, every perflog record of a run in the image carries it.

- a file (an Apptainer SIF, a SquashFS image): ``sha256:`` of its bytes;
- a directory (a Charliecloud image): ``tree-sha256:`` of its tree: one line per entry, in
  sorted order, holding its path, permission bits and its content (a file's sha256, a
  symbolic link's target, 'd' for a directory). Owners and times are left out: the same
  files copied or built again by another user give the same digest, a changed byte, name,
  mode or link does not.
"""
import hashlib
import os
import stat

BLOCK = 1 << 20


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(BLOCK), b''):
            digest.update(block)
    return digest.hexdigest()


def _entry(path):
    """(kind and content) of one entry of a tree, not following symbolic links."""
    mode = os.lstat(path).st_mode
    if stat.S_ISLNK(mode):
        content = 'l ' + os.readlink(path)
    elif stat.S_ISDIR(mode):
        content = 'd'
    elif stat.S_ISREG(mode):
        content = 'f ' + file_sha256(path)
    else:                       # devices, FIFOs, sockets: their kind only
        content = f'o {stat.S_IFMT(mode):o}'
    return f'{stat.S_IMODE(mode):o} {content}'


def _raise(err):
    raise err


def tree_sha256(root, leave_out=()):
    """``leave_out``: paths relative to ``root`` that are not part of the image."""
    digest = hashlib.sha256()
    for parent, dirs, files in os.walk(root, onerror=_raise):   # an unreadable directory fails
        rel = os.path.relpath(parent, root)
        dirs[:] = sorted(d for d in dirs if os.path.normpath(os.path.join(rel, d))
                         not in leave_out)    # os.walk descends in this order
        for name in sorted(dirs + files):
            path = os.path.normpath(os.path.join(rel, name))
            if path in leave_out:
                continue
            entry = _entry(os.path.join(parent, name))
            digest.update(os.fsencode(path))
            digest.update(b'\0' + entry.encode('utf-8', 'surrogateescape') + b'\n')
    return digest.hexdigest()


def digest(path, leave_out=()):
    """``sha256:<hex>`` of a file, ``tree-sha256:<hex>`` of a directory (without
    ``leave_out``); OSError if neither can be read."""
    if os.path.isdir(path):
        return f'tree-sha256:{tree_sha256(path, leave_out)}'
    return f'sha256:{file_sha256(path)}'
