"""The ``--out`` directory of ssb-acceptance, often shared: directories checked before anything
is written in them, one run at a time (an exclusive lock that says who holds it), and each
finished report published in one rename, with DIR/latest pointing at it."""
import datetime
import fcntl
import json
import os

from ssb_common import safefiles
from ssb_common.atomic import umask

from ssb_references.runs import notices


class OutDirError(Exception):
    """The directory is not safe to write in, or another run holds it."""


def now():
    return datetime.datetime.now(datetime.timezone.utc)


def own_dir(path, follow=False):
    """safefiles.own_dir, its refusal this command's."""
    try:
        return safefiles.own_dir(path, follow)
    except safefiles.NotRegularFile as err:
        raise OutDirError(str(err)) from None


class Lock:
    """An exclusive lock on DIR/.lock; says who holds it when it is taken."""

    def __init__(self, out):
        self.path = os.path.join(out, '.lock')

    def __enter__(self):
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError:
            if os.path.islink(self.path):
                raise OutDirError(f'{self.path} is a symbolic link: refusing to follow it '
                              f'(remove it)') from None
            raise
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self.fd, 200, 0).decode(errors='replace').strip() or 'unknown'
            os.close(self.fd)
            raise OutDirError(f'another ssb-acceptance run holds {self.path} ({holder}); '
                          f'not starting a second one on the same --out') from None
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, f'pid {os.getpid()} on {os.uname().nodename}, since '
                           f'{now():%Y-%m-%dT%H:%M:%SZ}\n'.encode(), 0)
        return self

    def __exit__(self, *exc):
        os.close(self.fd)          # releases the lock


def publish(out, partial, stamp):
    """Move the finished report into place and point DIR/latest at it (both atomic)."""
    final = os.path.join(out, 'reports', stamp)
    os.chmod(partial, 0o777 & ~umask())        # mkdtemp made it private to its owner
    os.rename(partial, final)
    link = os.path.join(out, f'.latest-{os.getpid()}')
    os.symlink(os.path.relpath(final, out), link)
    os.replace(link, os.path.join(out, 'latest'))
    return final


def judged_sessions(out):
    """The sessions ssb-acceptance judged and published under ``out``: the ``session`` of each
    DIR/reports/*/summary.json. Only regular files, no link followed (the directory is
    shared); the unreadable ones are left out with one warning."""
    reports = os.path.join(out, 'reports')
    judged, bad = set(), []
    with os.scandir(reports) as entries:
        for entry in entries:
            if entry.name.startswith('.'):           # an incomplete report, the lock
                continue
            path = os.path.join(reports, entry.name, 'summary.json')
            try:
                if not entry.is_dir(follow_symlinks=False):
                    raise safefiles.NotRegularFile(f'{entry.path} is no report directory')
                with safefiles.open_regular(path, follow=False) as f:
                    session = json.load(f).get('session')
                if session is not None and not isinstance(session, str):
                    raise ValueError('not a session')
                if session:                 # None: ReFrame stored no session that night
                    judged.add(session)
            except (OSError, ValueError, AttributeError):    # AttributeError: not a mapping
                bad.append(path)
    if bad:
        notices.warn(f'{len(bad)} report(s) under {reports} without a readable summary.json '
                     f'(e.g. {sorted(bad)[0]}): their sessions count as never judged here')
    return judged
