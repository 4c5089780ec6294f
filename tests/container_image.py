"""The suite's image, as ``ssb-container build`` makes it (reusing its earlier build), for the
tests that run in it. .ci/run installs Charliecloud and sets SSB_REQUIRE_CONTAINER=1: there a
missing runtime fails these tests instead of skipping them."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

SSB_CONTAINER = os.path.join(os.path.dirname(sys.executable), 'ssb-container')
TOOLS = ('ch-run', 'ch-image', 'mmdebstrap', 'rsync')


@pytest.fixture(scope='session')
def suite_image():
    """(path, digest) of the built image."""
    missing = [t for t in TOOLS if not shutil.which(t)]
    if missing:
        message = (f'no {", ".join(missing)} here (Debian packages charliecloud, '
                   f'charliecloud-builders, python3-lark, mmdebstrap, rsync)')
        if os.environ.get('SSB_REQUIRE_CONTAINER') == '1':
            pytest.fail(message)
        pytest.skip(message)
    proc = subprocess.run([SSB_CONTAINER, 'build', '--source', REPO], capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-4000:]
    path = proc.stdout.splitlines()[-1]
    digest = re.search(r'^ssb-container: image (\S+), ', proc.stderr, re.MULTILINE)[1]
    assert os.path.isdir(path), proc.stdout
    return path, digest
