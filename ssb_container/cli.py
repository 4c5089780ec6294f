"""``ssb-container build [--out DIR]``: the suite's image, built with Charliecloud from
site_configs/container/Dockerfile on a Debian base from Debian's packages, no registry.
Progress goes to stderr; the last line, on stdout, is the image's path."""
import argparse
import os
import sys
import time

from . import build

TAG = 'size-shape-bench'
BASE = 'ssb-debian-{suite}'


def checkout(given):
    """The size-shape-bench checkout to build from: ``--source``, else the one this module
    lies in (an editable install), else the working directory."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for candidate in ([given] if given else [here, os.getcwd()]):
        if os.path.isfile(os.path.join(candidate, build.DOCKERFILE)):
            return os.path.abspath(candidate)
    raise build.BuildError(f'{given or os.getcwd()} is not a size-shape-bench checkout (no '
                           f'{build.DOCKERFILE}): run from one, or name it with --source')


def parser():
    parser = argparse.ArgumentParser(prog='ssb-container', description=__doc__)
    sub = parser.add_subparsers(dest='command', required=True)
    b = sub.add_parser('build', help='build the image (reusing what is unchanged)')
    b.add_argument('--out', help='the image directory to write (default: size-shape-bench '
                                 "beside Charliecloud's storage directory, in "
                                 '/var/tmp/$USER.ch.ssb)')
    b.add_argument('--storage', help="Charliecloud's storage directory (default: "
                                     "$CH_IMAGE_STORAGE, else /var/tmp/$USER.ch)")
    b.add_argument('--source', help='the checkout to build from (default: this one)')
    b.add_argument('--suite', default='bookworm', help='Debian release of the base '
                                                       '(default: bookworm, Python 3.11)')
    b.add_argument('--mirror', default='http://deb.debian.org/debian',
                   help='Debian mirror of the base and its packages')
    b.add_argument('--fresh', action='store_true',
                   help='a new base and every step again, nothing reused')
    return parser


def build_in(env, args, source, storage, cache):
    """Steps 1-4 (build.py); (the image's path, its digest)."""
    base = BASE.format(suite=args.suite)
    build.base(env, base, args.suite, args.mirror, args.fresh, cache)
    changed = build.sync_context(source, os.path.join(cache, 'context'))
    build.say(f'[2/4] build context from {source}: {changed} file(s) changed')
    build.build(env, source, os.path.join(cache, 'context'), TAG, base, args.fresh)
    built = os.path.join(storage, 'img', TAG)
    if not os.path.isdir(built):
        raise build.BuildError(f'ch-image reported success but {built} is not there')
    # ch-run runs no directory of ch-image's storage: the image is copied out of it.
    image = os.path.abspath(args.out or os.path.join(cache, TAG))
    return image, build.export(env, built, image)


def main(argv=None):
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    start = time.monotonic()
    try:
        source = checkout(args.source)
        env = build.tool_env(args.storage or os.environ.get('CH_IMAGE_STORAGE', ''))
        if not env['CH_IMAGE_STORAGE']:
            del env['CH_IMAGE_STORAGE']
        storage = build.storage_path(env)
        env['CH_IMAGE_STORAGE'] = storage
        cache = storage.rstrip('/') + '.ssb'      # beside Charliecloud's own, as persistent
        with build.one_at_a_time(cache):
            image, digest = build_in(env, args, source, storage, cache)
    except build.BuildError as err:
        print(f'error: {err}', file=sys.stderr)
        return 1
    except OSError as err:
        print(f'error: {err}', file=sys.stderr)
        return 1
    build.say(f'image {digest}, {time.monotonic() - start:.0f} s in all')
    print(image)
    return 0
