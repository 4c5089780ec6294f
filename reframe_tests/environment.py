"""What a test takes from the site configuration, with the defaults when a key is absent:
the Python that runs the payload, or the container image it runs in."""
import functools
import hashlib
import os
import shlex
import sys

from . import checked, site_keys

DOUBLE_QUOTE_SPECIAL = '$`"\\\n'


def python_for(test):
    """The Python that runs the payload.

    A site's TensorFlow environment names it in its ``extras`` (``python``) or puts
    ``python3`` on PATH through its modules; ReFrame's builtin environment (no
    ``-C``) runs the suite with the Python that runs ReFrame, where README.md
    installs it.
    """
    environ = test.current_environ
    if environ.name == 'builtin':
        return sys.executable
    return environ.extras.get(site_keys.PYTHON, 'python3')


def container_image(test):
    """The image the test runs in: ``-S container_image=...``, else the partition's
    ``extras['container_image']``; '' for none."""
    return test.container_image or test.current_partition.extras.get(site_keys.CONTAINER_IMAGE, '')


def run_python(test, args, mounts=()):
    """Make ``test`` run ``python <args>``: on the host, or in its container image.

    In a container (ReFrame's ``container_platform``, the partition's first one
    unless the test names another), ``python3`` comes from the image, the stage
    directory is mounted as the working directory and each of ``mounts`` (data,
    staging) at its own path. Returns the image's digest for the perflog, or ''.
    """
    image = container_image(test)
    # ReFrame pastes these into the job script: each is quoted to stay one argument.
    if not image:
        test.executable = shlex.quote(python_for(test))
        test.executable_opts = [shlex.quote(str(a)) for a in args]
        return ''
    mounts = [path for path in dict.fromkeys(mounts) if path]
    for path in mounts:
        # ReFrame writes mount points inside double quotes, where these still expand.
        bad = sorted(set(path) & set(DOUBLE_QUOTE_SPECIAL))
        if bad:
            raise checked.VariableError(f'{path!r} cannot be mounted in a container: '
                                        f'{" ".join(map(repr, bad))} would be expanded by the '
                                        f'shell')
    platform = test.container_platform
    platform.image = shlex.quote(image)
    platform.command = shlex.join(['python3', *map(str, args)])
    platform.mount_points = [(path, path) for path in mounts]
    return image_digest(image)


@functools.cache
def _file_digest(path, size, mtime):
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 24), b''):
            digest.update(block)
    return f'sha256:{digest.hexdigest()}'


def image_digest(image):
    """The image's digest: pinned in a ``...@sha256:...`` reference, or of a local file
    (an Apptainer SIF); else 'unknown: <why>'."""
    if '@sha256:' in image:
        return 'sha256:' + image.split('@sha256:', 1)[1]
    if os.path.isfile(image):
        stat = os.stat(image)
        return _file_digest(image, stat.st_size, stat.st_mtime)
    return f'unknown: {shlex.quote(image)} is neither a local file nor pinned by digest'
