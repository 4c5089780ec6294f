"""Where a result comes from: the suite's version and the git revision of a checkout (the
payload, the ReFrame tests and ssb-references say both)."""
import functools
import importlib.metadata
import subprocess


def suite_version():
    """The size-shape-bench distribution's version (setup.cfg), as installed."""
    try:
        return importlib.metadata.version('size-shape-bench')
    except importlib.metadata.PackageNotFoundError:
        return None


@functools.cache
def git_revision(path):
    """``<commit>`` or ``<commit>-dirty`` of the git checkout holding ``path``; None elsewhere.

    Once per process and path: a ReFrame session asks for every test."""
    try:
        head = subprocess.run(['git', '-C', path, 'rev-parse', 'HEAD'], capture_output=True,
                              text=True, timeout=30)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(['git', '-C', path, 'status', '--porcelain', '--untracked-files=no'],
                               capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return head.stdout.strip() + ('-dirty' if dirty else '')
