"""A ReFrame container platform for Charliecloud, which ReFrame does not ship.

A partition selects it as it selects ReFrame's own platforms,
``'container_platforms': [{'type': 'Charliecloud'}]`` (with ``modules`` or ``env_vars`` where
the runtime needs them); ReFrame cannot create a type it does not know, so the tests put this
one in the test's ``container_platform`` themselves (environment.py). The job script then
runs ``ch-run`` on an image directory or SquashFS file, as ``ssb-container build`` makes.

Charliecloud mounts nothing at a path the image does not have (images are read-only), so
the stage directory goes to ``/rfm_workdir`` (the Dockerfile makes it) and other directories
to ``/mnt/0`` ... ``/mnt/9`` (every image ``ch-image`` builds has them).
"""
import os
import shlex
import shutil
import subprocess

from reframe.core.containers import ContainerPlatform
from reframe.core.exceptions import ReframeError

MOUNT_POINTS = tuple(f'/mnt/{i}' for i in range(10))
SQUASHFS_MAGIC = b'hsqs'
# The host's Python must not reach the image's: ch-run passes the host environment on.
UNSET = ('PYTHONPATH', 'PYTHONHOME', 'PYTHONSTARTUP', 'PYTHONUSERBASE')
MODULES = ('tensorflow', 'payload', 'sizeshape_datasets')
PROBE = ('import importlib.util as u; '
         f'print(" ".join(m for m in {MODULES!r} if u.find_spec(m) is None))')
PROBE_TIMEOUT_S = 120


class ImageError(ReframeError):
    """An image the payload cannot run in; fails the test at set-up."""


class Charliecloud(ContainerPlatform):
    """``ch-run`` with the image's own environment (``--set-env``: the Dockerfile's ENV),
    the stage directory as working directory and each mount at its ``/mnt/N``."""

    def emit_prepare_commands(self, stagedir):
        # ch-run refuses to start without $USER, which batch jobs do not always set.
        return ['export USER="${USER:-$(id -un)}"']

    def launch_command(self, stagedir):
        mounts = list(self.mount_points)
        if self.mount_stagedir:
            mounts.append((stagedir, self.mount_stagedir))
        opts = ['--set-env', *(f'--unset-env={name}' for name in UNSET)]
        opts += [f'--bind={shlex.quote(src)}:{shlex.quote(dst)}' for src, dst in mounts]
        if self.workdir:
            opts.append(f'--cd={shlex.quote(self.workdir)}')
        opts += self.options
        # image and command are shell text, as for ReFrame's own platforms.
        return ' '.join(['ch-run', *opts, self.image, '--', self.command or 'true'])

    @staticmethod
    def destinations(paths):
        """Where each of ``paths`` is mounted in the image."""
        if len(paths) > len(MOUNT_POINTS):
            raise ImageError(f'{len(paths)} directories to mount; Charliecloud images have '
                             f'{len(MOUNT_POINTS)} mount points')
        return list(zip(paths, MOUNT_POINTS))

    @staticmethod
    def check_image(image):
        """Refuse, with the reason, an image ch-run cannot run: missing, unreadable, not a
        directory image with the suite's mount points, nor a SquashFS file."""
        try:
            os.stat(image)
        except (FileNotFoundError, NotADirectoryError):
            raise ImageError(f'container image {image!r} does not exist: build one with '
                             f'`ssb-container build` (docs/clusters.md, "Containers")') from None
        except OSError as err:
            raise ImageError(f'container image {image!r} cannot be read: '
                             f'{err.strerror}') from None
        if os.path.isdir(image):
            if not os.access(image, os.R_OK | os.X_OK):
                raise ImageError(f'container image {image!r} cannot be read')
            needed = ['bin/sh', 'etc/passwd', 'rfm_workdir', *(m[1:] for m in MOUNT_POINTS)]
            missing = [p for p in needed if not os.path.lexists(os.path.join(image, p))]
            if missing:
                raise ImageError(f'{image!r} is not a Charliecloud image of the suite: it has '
                                 f'no /{", /".join(missing)} (build it from '
                                 f'site_configs/container/Dockerfile)')
            return
        try:
            with open(image, 'rb') as f:
                magic = f.read(len(SQUASHFS_MAGIC))
        except OSError as err:
            raise ImageError(f'container image {image!r} cannot be read: '
                             f'{err.strerror}') from None
        if magic != SQUASHFS_MAGIC:
            raise ImageError(f'{image!r} is not a container image: Charliecloud runs a '
                             f'directory or a SquashFS file')

    @staticmethod
    def probe(image):
        """Refuse an image whose python3 lacks TensorFlow or the payload, asking the image
        itself (ch-run, a second); nothing where ch-run is not on this host's PATH (the job's
        modules may bring it)."""
        ch_run = shutil.which('ch-run')
        if ch_run is None:
            return
        env = {k: v for k, v in os.environ.items() if k not in UNSET}
        env.setdefault('USER', _user())
        cmd = [ch_run, '--set-env', image, '--', 'python3', '-c', PROBE]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                                  timeout=PROBE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise ImageError(f'container image {image!r}: python3 in it did not answer in '
                             f'{PROBE_TIMEOUT_S} s') from None
        if proc.returncode != 0:
            said = (proc.stderr.strip().splitlines() or ['no message'])[-1]
            raise ImageError(f'container image {image!r} does not run python3 '
                             f'(ch-run exit {proc.returncode}: {said})')
        missing = proc.stdout.split()
        if missing:
            raise ImageError(f'container image {image!r} has no {" and no ".join(missing)} '
                             f'for its python3: build it from site_configs/container/Dockerfile')


def _user():
    import pwd
    return pwd.getpwuid(os.getuid()).pw_name


PLATFORMS = {'Charliecloud': Charliecloud}
