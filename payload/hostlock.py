"""One timed run per host at a time: a per-host lock held from the first touch of the data
to the process's exit (the kernel drops it if the process dies).

Two payload runs on one host (ReFrame's asynchronous policy on one machine, or jobs that
share a node) would each time the other's load. The ranks of one data-parallel job share a
host by design: they hold the lock as one group (a launcher's job and step) and never wait
for each other.

Files, all in a per-user directory opened without following links, named by host:
- ``<host>.lock``: an exclusive flock, taken by the first rank of a group to come; its
  content names the group that holds it;
- ``<host>.members``: a shared flock held by every rank of the holding group; a new holder
  takes it exclusively first, so that the ranks of the last group have all left.
No TensorFlow import: the lock is taken before TensorFlow starts.
"""
import hashlib
import json
import os
import socket
import stat
import sys
import time

from payload import PayloadError

DIR_ENV = 'SSB_LOCK_DIR'
POLL_S = 0.2
SAY_EVERY_S = 30.0


def group_token():
    """What identifies this process's job: the ranks of one launch share it."""
    env = os.environ
    if env.get('SLURM_JOB_ID'):
        return f'slurm-{env["SLURM_JOB_ID"]}.{env.get("SLURM_STEP_ID", "batch")}'
    for name in ('PMIX_NAMESPACE', 'OMPI_MCA_orte_ess_jobid'):
        if env.get(name):
            return f'{name.lower()}-{env[name]}'
    if env.get('TF_CONFIG'):
        cluster = json.loads(env['TF_CONFIG']).get('cluster', {})
        return 'tf-' + hashlib.sha256(json.dumps(cluster, sort_keys=True).encode()).hexdigest()[:16]
    return f'pid-{os.getpid()}'


def lock_dir():
    """The per-user directory the lock files live in, checked: a directory (not a link)
    owned by this user that nobody else can write. ``$SSB_LOCK_DIR``, else
    ``$XDG_RUNTIME_DIR/size-shape-bench``, else ``/tmp/size-shape-bench-<uid>``."""
    uid = os.getuid()
    if os.environ.get(DIR_ENV):
        return _private_dir(os.environ[DIR_ENV], uid, DIR_ENV)
    runtime = os.environ.get('XDG_RUNTIME_DIR')
    if runtime and os.path.isdir(runtime) and os.stat(runtime).st_uid == uid:
        return _private_dir(os.path.join(runtime, 'size-shape-bench'), uid, 'XDG_RUNTIME_DIR')
    return _private_dir(f'/tmp/size-shape-bench-{uid}', uid, None)


def _private_dir(path, uid, source):
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as err:
        raise PayloadError(f'cannot make the timing lock directory {path}: '
                           f'{err.strerror}') from None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        raise PayloadError(f'the timing lock directory {path} is not a directory (a link or a '
                           f'file): remove it, or set ${DIR_ENV} to a private directory') from None
    info = os.fstat(fd)
    os.close(fd)
    if info.st_uid != uid or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        where = f' (from ${source})' if source else ''
        raise PayloadError(f'the timing lock directory {path}{where} belongs to uid '
                           f'{info.st_uid} or others can write it: remove it, or set '
                           f'${DIR_ENV} to a directory only you can write')
    return path


def _open(path):
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as err:
        raise PayloadError(f'cannot open the timing lock {path}: {err.strerror}') from None


class HostLock:
    """Held from ``acquire`` until the process exits (its descriptors are never closed)."""

    def __init__(self, directory=None, token=None, host=None, stream=None):
        self.directory = directory or lock_dir()
        self.token = token or group_token()
        host = host or socket.gethostname()
        self.path = os.path.join(self.directory, f'{host}.lock')
        self.members_path = os.path.join(self.directory, f'{host}.members')
        self.stream = stream or sys.stderr
        self.wait_s = 0.0
        self.acquired_unix = None

    def _holder(self, fd):
        return os.pread(fd, 512, 0).decode(errors='replace').strip()

    def acquire(self):
        import fcntl
        lock_fd, members_fd = _open(self.path), _open(self.members_path)
        start = time.monotonic()
        said = None
        while True:
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = self._holder(lock_fd)
                if holder.split(' ', 1)[0] == self.token:    # a rank of this job holds it
                    fcntl.flock(members_fd, fcntl.LOCK_SH)
                    os.close(lock_fd)
                    self._held = (members_fd,)
                    break
                now = time.monotonic()
                if said is None or now - said >= SAY_EVERY_S:
                    print(f'progress: waiting for another timed run on this host to end '
                          f'({holder or "starting"}; lock {self.path}), '
                          f'{now - start:.0f} s so far', file=self.stream, flush=True)
                    said = now
                time.sleep(POLL_S)
                continue
            # Holder: the last group's ranks must all have left before this one times.
            fcntl.flock(members_fd, fcntl.LOCK_EX)
            os.ftruncate(lock_fd, 0)
            os.pwrite(lock_fd, f'{self.token} pid {os.getpid()}\n'.encode(), 0)
            fcntl.flock(members_fd, fcntl.LOCK_SH)
            self._held = (lock_fd, members_fd)
            break
        self.wait_s = time.monotonic() - start
        self.acquired_unix = time.time()
        if said is not None:
            print(f'progress: timing lock taken after {self.wait_s:.1f} s of waiting',
                  file=self.stream, flush=True)
        return self


def summary(lock):
    """The summary fields of the lock (None: a run that took none, --timing-lock off)."""
    if lock is None:
        return {'timing_lock': None, 'timing_lock_wait_s': 0.0, 'timed_start_unix': None}
    return {'timing_lock': lock.path, 'timing_lock_wait_s': lock.wait_s,
            'timed_start_unix': lock.acquired_unix}
