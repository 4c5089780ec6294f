"""Whether this process runs in a container, told by what the kernel shows it, not by how the
run was configured. No TensorFlow import.

The evidence is the process's root mount (``/proc/self/mountinfo``): on a host, ``/`` is the
root of its file system; a container runtime makes ``/`` a directory of another file system
(Charliecloud's directory images), a SquashFS image (Apptainer's SIF, Charliecloud's SquashFS
images) or an overlay of image layers (Docker, Podman). An unprivileged process cannot make its
own root so; it is the runtime's work. A runtime's own marker then names which one it was:
only beside that evidence, since a marker is an environment variable or a file that anyone
can set or leave behind.
"""
import os

ROOT_IMAGE_FILESYSTEMS = ('squashfs', 'fuse.squashfuse', 'fuse.squashfuse_ll', 'overlay')
# (runtime, what marks it): an environment variable its runs get, or a file in its images.
MARKERS = (
    ('charliecloud', 'env', 'CH_RUNNING'),
    ('apptainer', 'env', 'APPTAINER_CONTAINER'),
    ('apptainer', 'env', 'SINGULARITY_CONTAINER'),
    ('podman', 'file', '/run/.containerenv'),
    ('docker', 'file', '/.dockerenv'),
)


def _unescape(field):
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    for escaped, char in (('\\040', ' '), ('\\011', '\t'), ('\\012', '\n'), ('\\134', '\\')):
        field = field.replace(escaped, char)
    return field


def root_mount(mountinfo='/proc/self/mountinfo'):
    """(root within its file system, file system type, source) of the mount on ``/``; None
    where mountinfo cannot be read. The last such mount is the one in effect."""
    found = None
    try:
        with open(mountinfo) as f:
            for line in f:
                fields = line.split()
                if '-' not in fields[6:]:
                    continue
                sep = fields.index('-', 6)
                if _unescape(fields[4]) == '/' and len(fields) > sep + 2:
                    found = (_unescape(fields[3]), fields[sep + 1], _unescape(fields[sep + 2]))
    except OSError:
        return None
    return found


def root_evidence(mount):
    """Why this root is a container's, or None."""
    root, fstype, source = mount
    if root != '/':
        return f'/ is {root} of {source} ({fstype})'
    if fstype in ROOT_IMAGE_FILESYSTEMS:
        return f'/ is a {fstype} file system ({source})'
    return None


def marked_runtime(environ=os.environ, exists=os.path.exists):
    for runtime, kind, what in MARKERS:
        if (kind == 'env' and environ.get(what)) or (kind == 'file' and exists(what)):
            return runtime, what
    return None, None


def detect(mountinfo='/proc/self/mountinfo', environ=os.environ, exists=os.path.exists):
    """The summary's ``container_runtime`` ('none'; a runtime's name; 'unknown': a container
    that no marker names; 'undetermined': no mountinfo) and ``container_evidence`` (what
    told it)."""
    mount = root_mount(mountinfo)
    if mount is None:
        return {'container_runtime': 'undetermined',
                'container_evidence': f'{mountinfo} cannot be read'}
    evidence = root_evidence(mount)
    runtime, marker = marked_runtime(environ, exists)
    if evidence is None:
        note = f'; {marker} is there, but / is the host\'s' if marker else ''
        return {'container_runtime': 'none', 'container_evidence': f'/ is a file system root{note}'}
    return {'container_runtime': runtime or 'unknown',
            'container_evidence': evidence + (f'; {marker}' if marker else '')}
