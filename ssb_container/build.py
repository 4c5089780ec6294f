"""The steps of ``ssb-container build``, each reusing what an earlier build left:

1. a Debian base from Debian's own packages (``mmdebstrap``, a tarball: no device files),
   imported into Charliecloud's storage once (``ch-image import``);
2. the build context: the files the Dockerfile copies, kept in the cache directory with
   their times unchanged while their bytes are (ch-image's build cache keys a COPY on them);
3. ``ch-image build`` of site_configs/container/Dockerfile on that base, with the build
   machine's pip sources (pip_sources.py): its build cache reruns only what changed;
4. the image copied out of the storage (``ch-run`` runs no image in it) to ``--out``,
   unless that holds this image already (``export``).
"""
import contextlib
import fcntl
import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from ssb_common import atomic, image_digest

from . import pip_sources

DOCKERFILE = os.path.join('site_configs', 'container', 'Dockerfile')
# What the Dockerfile copies, relative to the checkout.
CONTEXT = ('setup.cfg', 'pyproject.toml', 'README.md', 'payload', 'sizeshape_datasets',
           'ssb_references', 'ssb_common', 'ssb_contract', 'ssb_container')
SKIPPED = ('__pycache__', '.pyc', '.egg-info')
# ch-image's build cache keeps these in an image of its storage; they are not the image.
BUILD_CACHE_FILES = ('.git', '.gitignore', 'ch/git.pickle')
# ch-image's line for each instruction: '  12* RUN ...' (from its cache) or '  12. RUN ...'.
INSTRUCTION = re.compile(r'^\s*\d+([.*])\s')


class BuildError(Exception):
    """A step failed; one line, ``error: ...``."""


def say(text):
    print(f'ssb-container: {text}', file=sys.stderr, flush=True)


def tool(name):
    path = shutil.which(name)
    if path is None:
        raise BuildError(f'{name} is not installed: Debian packages charliecloud, '
                         f'charliecloud-builders, python3-lark, mmdebstrap and rsync '
                         f'(docs/clusters.md, "Containers")')
    return path


def tool_env(storage):
    """The environment of Charliecloud's tools: ch-image is a Python program run by the
    ``python3`` first on PATH, which must be the one installed beside it (with lark), not
    a virtualenv's or pyenv's; and ch-run, ch-image want $USER."""
    env = dict(os.environ, CH_IMAGE_STORAGE=storage)
    env['PATH'] = os.path.dirname(tool('ch-image')) + os.pathsep + env.get('PATH', '')
    if not env.get('USER'):
        import pwd
        env['USER'] = pwd.getpwuid(os.getuid()).pw_name
    env.pop('VIRTUAL_ENV', None)
    return env


def run(cmd, env, show=None):
    """Run ``cmd``; its lines that ``show`` accepts go to stderr as they come. A failure
    shows its last lines, then raises BuildError with its last one."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, errors='replace')
    tail = []
    for line in proc.stdout:
        line = line.rstrip('\n')
        tail = (tail + [line])[-20:]
        if show and show(line):
            print(f'  {line}', file=sys.stderr, flush=True)
    if proc.wait() != 0:
        print('\n'.join(f'  | {line}' for line in tail), file=sys.stderr)
        last = next((line for line in reversed(tail) if line.strip()), 'no output')
        raise BuildError(f'{os.path.basename(cmd[0])} failed (exit {proc.returncode}): {last}')


@contextlib.contextmanager
def one_at_a_time(cache):
    """Hold the cache directory's lock: two builds on one storage would rebuild, digest and
    copy out the same image at once (seen: one digesting what the other was replacing)."""
    os.makedirs(cache, mode=0o700, exist_ok=True)
    fd = os.open(os.path.join(cache, 'lock'), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f'waiting for another ssb-container build on {cache} ...')
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def storage_path(env):
    out = subprocess.run(['ch-image', 'gestalt', 'storage-path'], env=env, text=True,
                         capture_output=True)
    if out.returncode != 0:
        raise BuildError(f'ch-image does not run: {out.stderr.strip() or out.stdout.strip()}')
    return out.stdout.strip()


def has_image(env, tag):
    out = subprocess.run(['ch-image', 'list'], env=env, text=True, capture_output=True)
    return tag in out.stdout.split()


def base(env, name, suite, mirror, fresh, cache):
    """The Debian base in ch-image storage, made unless there (or ``fresh``)."""
    if has_image(env, name) and not fresh:
        say(f'[1/4] Debian {suite} base: {name} (reused)')
        return
    say(f'[1/4] Debian {suite} base: mmdebstrap from {mirror} ...')
    start = time.monotonic()
    os.makedirs(cache, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        tarball = os.path.join(tmp, 'base.tar')
        run([tool('mmdebstrap'), '--variant=minbase', suite, tarball, mirror], env)
        run([tool('ch-image'), 'import', tarball, name], env)
    say(f'[1/4] Debian {suite} base: {name} made in {time.monotonic() - start:.0f} s')


def _wanted(name):
    return not any(name == s or name.endswith(s) for s in SKIPPED)


def _files(top):
    if os.path.isfile(top):
        yield top
        return
    for parent, dirs, names in os.walk(top):
        dirs[:] = [d for d in dirs if _wanted(d)]
        yield from (os.path.join(parent, n) for n in names if _wanted(n))


def sync_context(source, context):
    """Copy the files the Dockerfile needs from ``source`` to ``context``: a file whose bytes
    are unchanged keeps its copy (and that copy's time), others are replaced, stale ones
    removed. Returns how many files changed."""
    changed, keep = 0, set()
    for top in CONTEXT:
        src_top = os.path.join(source, top)
        if not os.path.exists(src_top):
            raise BuildError(f'{source} has no {top}: not a size-shape-bench checkout')
        for src in _files(src_top):
            rel = os.path.relpath(src, source)
            dst = os.path.join(context, rel)
            keep.add(rel)
            if os.path.isfile(dst) and filecmp.cmp(src, dst, shallow=False):
                continue
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(src, dst)
            changed += 1
    for d, _, names in os.walk(context, topdown=False):
        for f in names:
            if os.path.relpath(os.path.join(d, f), context) not in keep:
                os.remove(os.path.join(d, f))
                changed += 1
        if d != context and not os.listdir(d):
            os.rmdir(d)
    return changed


def build(env, source, context, tag, base_name, fresh):
    args, binds = pip_sources.build_args(pip_sources.host_settings())
    cmd = [tool('ch-image'), 'build', '--force', '-t', tag, '-f',
           os.path.join(source, DOCKERFILE), '--build-arg', f'BASE={base_name}']
    for arg in args:
        cmd += ['--build-arg', arg]
    for bind in binds:
        cmd += ['--bind', bind]
    if fresh:
        cmd.append('--rebuild')
    say(f'[3/4] ch-image build {tag} (* from its cache, . built now)'
        + (f'; pip sources: {", ".join(a.split("=", 1)[0] for a in args)}' if args else ''))
    start = time.monotonic()
    cmd.append(context)
    run(cmd, env, show=lambda line: INSTRUCTION.match(line) or line.startswith('grown'))
    say(f'[3/4] built in {time.monotonic() - start:.0f} s')


def export(env, image, out):
    """Copy ``image`` (in storage) to ``out``, unless ``out`` holds the same tree: into a new
    directory, hard-linking the files an earlier ``out`` has unchanged (rsync --link-dest),
    then renamed into place: a small change copies little, and ``out`` is never half one
    image and half another. What ch-image's build cache keeps in the image is left out, as
    ``ch-convert`` leaves it out."""
    digest = image_digest.digest(image, BUILD_CACHE_FILES)
    if os.path.lexists(out) and (not os.path.isdir(out) or os.path.islink(out)):
        raise BuildError(f'{out} exists and is not an image directory: not replacing it')
    if os.path.isdir(out) and image_digest.digest(out) == digest:
        say(f'[4/4] {out} holds this image already (reused)')
        return digest
    say(f'[4/4] copying to {out} ...')
    start = time.monotonic()
    parent = os.path.dirname(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)
    work = atomic.private_dir(parent, atomic.PARTIAL)
    try:
        cmd = [tool('rsync'), '-a', '--delete', '--checksum',
               *(f'--exclude=/{path}' for path in BUILD_CACHE_FILES)]
        if os.path.isdir(out):
            cmd.append(f'--link-dest={os.path.abspath(out)}')
        run(cmd + [image + '/', os.path.join(work, 'new')], env)
        if os.path.isdir(out):
            os.rename(out, os.path.join(work, 'old'))
        os.rename(os.path.join(work, 'new'), out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    say(f'[4/4] copied in {time.monotonic() - start:.0f} s')
    return digest
