"""Running the payload in a container image: which image and which runtime, the image's
checks at set-up, its digest for the perflog, and the payload's own word that it ran in one.

The image is ``-S container_image=PATH``, else the partition's ``extras['container_image']``;
none: the payload runs on the host. The runtime is the partition's container platform
(``container_platforms``, ReFrame's own or charliecloud.py's), else Charliecloud, which
``ssb-container build`` builds for. Tests that run in an image carry the tag ``container``.
"""
import functools
import os

import reframe as rfm
from reframe.core.builtins import run_after, variable
from reframe.core.exceptions import SanityError

from ssb_common import image_digest as digests

from . import charliecloud, checked, site_keys

CONTAINER_TAG = 'container'
DEFAULT_PLATFORM = 'Charliecloud'
# What the payload's summary says where it found no container (payload/container.py).
NOT_DETECTED = ('none', 'undetermined')


class InImage(rfm.RegressionTestPlugin):
    """The container variables of a test that runs the payload, and their checks."""

    # Run the payload in this image (docs/clusters.md, "Containers").
    container_image = variable(str, value='')
    # Outputs (checked.output): the image's digest, the runtime that ran it ('none': the
    # host) and the runtime the payload found itself in (payload/container.py).
    container_image_digest = variable(checked.output(str, 'set container_image instead'),
                                      value='')
    container_runtime = variable(
        checked.output(str, 'the partition\'s container_platforms choose it'), value='none')
    container_detected = variable(
        checked.output(str, 'the payload detects it where it runs'), value='none')
    # False: the test runs no payload of its own (the gap): it takes its runs' fields.
    runs_payload = True

    @run_after('init', always_last=True)      # after the hooks that set the tags
    def tag_container_runs(self):
        partitions = self.current_system.partitions
        if self.container_image or any(p.extras.get(site_keys.CONTAINER_IMAGE)
                                       for p in partitions):
            self.tags.add(CONTAINER_TAG)

    @run_after('setup')
    def check_image(self):
        """Charliecloud's: refuse a missing or unreadable image, one that is not an image, or
        one without TensorFlow, before anything is submitted: nothing then trains on the host
        instead. A dry run writes the job script without looking at the image (it may be
        on the cluster only); ReFrame's own runtimes take references this host cannot check."""
        image = image_of(self)
        if not image or not self.runs_payload:
            return
        platform = platform_for(self)
        self.container_image = image          # the perflog names it, wherever it was set
        self.container_runtime = platform.name
        if isinstance(platform, charliecloud.Charliecloud) and not self.is_dry_run():
            platform.check_image(image)
            _probed(image, _stamp(image))
        self.container_image_digest = image_digest(image)

    def assert_ran_in_image(self, summaries):
        """Sanity: where the test launched a container, every worker's payload found itself
        in one (``summaries``: the payload's, by worker)."""
        seen = {s.get('container_runtime') for s in summaries.values()}
        self.container_detected = ','.join(sorted(str(s) for s in seen))
        if self.container_runtime == 'none':
            return True
        outside = {w: s.get('container_evidence') for w, s in summaries.items()
                   if s.get('container_runtime') in NOT_DETECTED}
        if outside:
            raise SanityError(f'the job ran {self.container_runtime}, but the payload found '
                              f'no container around it: ' +
                              '; '.join(f'worker {w}: {e}' for w, e in sorted(outside.items())))
        return True


def image_of(test):
    """``-S container_image=...``, else the partition's ``extras['container_image']``; ''."""
    return test.container_image or test.current_partition.extras.get(
        site_keys.CONTAINER_IMAGE, '')


def platform_for(test):
    """The test's container platform: the one ReFrame made from the partition's
    configuration, or charliecloud.py's, which ReFrame cannot make."""
    declared = test.current_partition.container_runtime
    name = (declared or DEFAULT_PLATFORM).capitalize()
    if test.container_platform.name == name:
        return test.container_platform
    if name in charliecloud.PLATFORMS:
        test.container_platform = charliecloud.PLATFORMS[name]()
        return test.container_platform
    raise charliecloud.ImageError(
        f'the partition {test.current_partition.fullname} declares the container platform '
        f'{declared!r}, which neither ReFrame nor the suite knows '
        f'({", ".join(charliecloud.PLATFORMS)} or one of ReFrame\'s)')


def _stamp(path):
    stat = os.stat(path)
    return stat.st_size, stat.st_mtime_ns


@functools.cache
def _probed(image, stamp):
    """Once per image and session: every test of a session checks the same image."""
    charliecloud.Charliecloud.probe(image)


@functools.cache
def _digest(path, stamp):
    return digests.digest(path)


def image_digest(image):
    """The image's digest (ssb_common/image_digest.py): of a local file or directory, or
    the one a ``...@sha256:`` reference pins; else 'unknown: <why>'."""
    if '@sha256:' in image:
        return 'sha256:' + image.split('@sha256:', 1)[1]
    if os.path.exists(image):
        try:
            return _digest(os.path.realpath(image), _stamp(image))
        except OSError as err:
            raise charliecloud.ImageError(f'container image {image!r} cannot be read: '
                                          f'{err}') from None
    return f'unknown: {image} is neither a local file nor pinned by digest'
