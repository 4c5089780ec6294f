"""How a test runs the payload: with the Python the site configuration names, or in the
container image the test runs in (in_image.py)."""
import os
import shlex
import sys

from . import charliecloud, checked, in_image, site_keys

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


def mount_dirs(paths):
    """The directories to mount for ``paths`` (a file's: its directory), each once; relative
    paths are the stage directory's, mounted anyway."""
    dirs = [p if os.path.isdir(p) or not os.path.exists(p) else os.path.dirname(p)
            for p in paths if p and os.path.isabs(p)]
    return list(dict.fromkeys(os.path.normpath(d) for d in dirs))


def in_container(arg, mounts):
    """``arg`` as the container sees it: a path under a mounted directory moves with it."""
    for src, dst in sorted(mounts, key=lambda m: len(m[0]), reverse=True):
        if arg == src or arg.startswith(src.rstrip('/') + '/'):
            return dst + arg[len(src):]
    return arg


def run_python(test, args, mounts=()):
    """Make ``test`` run ``python <args>``: on the host, or in its container image.

    In a container (the platform ``in_image.platform_for`` chose at set-up), ``python3``
    comes from the image, the stage directory is the working directory and each of
    ``mounts`` (data, staging) is mounted: at its own path, or where the platform puts it
    (Charliecloud: ``/mnt/N``), the arguments naming it moved with it.
    """
    args = [str(a) for a in args]
    image = in_image.image_of(test)
    # ReFrame pastes these into the job script: each is quoted to stay one argument.
    if not image:
        test.executable = shlex.quote(python_for(test))
        test.executable_opts = [shlex.quote(a) for a in args]
        return
    platform = test.container_platform
    dirs = mount_dirs(mounts)
    if isinstance(platform, charliecloud.Charliecloud):
        pairs = platform.destinations(dirs)        # it quotes each path itself
    else:
        for path in dirs:
            # ReFrame's platforms write mount points inside double quotes, where these expand.
            bad = sorted(set(path) & set(DOUBLE_QUOTE_SPECIAL))
            if bad:
                raise checked.VariableError(f'{path!r} cannot be mounted in a container: '
                                            f'{" ".join(map(repr, bad))} would be expanded '
                                            f'by the shell')
        pairs = [(path, path) for path in dirs]
    platform.image = shlex.quote(image)
    platform.command = shlex.join(['python3', *(in_container(a, pairs) for a in args)])
    platform.mount_points = pairs
