#!/usr/bin/env python3
"""Container overhead: LR&FS training throughput of the payload in the suite's Charliecloud
image against the same payload on the bare host, alternated (each round starts with the
next kind), medians reported (docs/benchmarks.md, "Container overhead").

    python benchmarks/container.py                    # builds (or reuses) the image
    python benchmarks/container.py --image DIR --pairs 5 --host-python /other/venv/bin/python

Every run takes the host's timing lock (the container shares the host's /tmp), so no other
timed payload run overlaps it; each run's summary must say where it ran (the host: no
container; the image: charliecloud), or the benchmark stops. ``--host-python`` (repeated)
adds bare-host runs with another interpreter, each its own row and ratio: the host's
Python build is part of what a container changes.
"""
import argparse
import datetime
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile

from harness import REPO, Run, fmt, load, table, verdict

from reframe_tests.charliecloud import Charliecloud  # noqa: E402  (harness set the path)

TARGET = 0.95


def image_of(args):
    if args.image:
        return os.path.abspath(args.image)
    ssb_container = os.path.join(os.path.dirname(sys.executable), 'ssb-container')
    out = subprocess.run([ssb_container, 'build', '--source', REPO], stdout=subprocess.PIPE,
                         text=True, check=True).stdout
    return out.splitlines()[-1]


def container_command(image, data):
    """The job-script line the tests run (reframe_tests/charliecloud.py), the data at /mnt/0."""
    platform_ = Charliecloud()
    platform_.image = shlex.quote(image)
    platform_.command = 'python3 -m payload "$@"'
    platform_.mount_points = [(data, '/mnt/0')]
    platform_.mount_stagedir = platform_.workdir = None
    env = f'export USER="${{USER:-$(id -un)}}"; {platform_.launch_command(None)}'
    return ['bash', '-c', env, 'ch-run']


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument('--image', help='the image directory (default: ssb-container build)')
    p.add_argument('--pairs', type=int, default=5, help='host/container pairs, at least 3')
    p.add_argument('--model', default='smallcnn')
    p.add_argument('--images', type=int, default=8, help='training images per class (29)')
    p.add_argument('--scale', type=float, default=0.1, help='synthetic MAMe shapes\' scale')
    p.add_argument('--batch-size', type=int, default=16)
    p.add_argument('--epochs', type=int, default=6)
    p.add_argument('--workdir', help='where the data go (default: a temporary directory '
                                     'under /var/tmp, removed)')
    p.add_argument('--host-python', action='append',
                   help='a Python with the payload installed, for the bare-host runs '
                        '(repeat for several; default: this one)')
    args = p.parse_args(argv)
    if args.pairs < 3:
        p.error('--pairs must be at least 3')
    image = image_of(args)
    with tempfile.TemporaryDirectory(dir=args.workdir or '/var/tmp') as work:
        from sizeshape_datasets import synthetic
        data = os.path.join(work, 'mame')
        synthetic.generate(data, images_per_class=args.images, val_per_class=0,
                           scale=args.scale, seed=0)
        timedir = os.path.join(work, 'time')
        os.makedirs(timedir)
        common = ['--variant', 'lrfs', '--model', args.model, '--batch-size', args.batch_size,
                  '--epochs', args.epochs, '--timing-lock', 'host', '--peak-gflops', 1,
                  '--input-probe-seconds', 0]     # neither is what is compared
        where = {f'host {python}': (['--data-dir', data, *common], (python, '-m', 'payload'))
                 for python in args.host_python or [sys.executable]}
        where['container'] = (['--data-dir', '/mnt/0', *common], container_command(image, data))
        kinds = list(where)
        runs = {kind: [] for kind in kinds}
        before = load()
        for pair in range(args.pairs):
            for kind in kinds[pair % len(kinds):] + kinds[:pair % len(kinds)]:
                print(f'[round {pair + 1}/{args.pairs}] {kind} ...', file=sys.stderr,
                      flush=True)
                run = Run(f'{kind} {pair + 1}', where[kind][0], timedir, where[kind][1])
                said = run.summary['container_runtime']
                if said != ('charliecloud' if kind == 'container' else 'none'):
                    raise SystemExit(f'{kind} run {pair + 1}: the payload says it ran in '
                                     f'{said!r} ({run.summary["container_evidence"]})')
                runs[kind].append(run)
        print(report(args, image, runs, before))
    return 0


def cpu_s(run):
    """The process's CPU seconds (user + system, /usr/bin/time): the work done, which other
    jobs' load on a shared machine moves less than the wall clock."""
    report = run.time_report
    if 'User time (seconds)' not in report:
        return None
    return float(report['User time (seconds)']) + float(report['System time (seconds)'])


def report(args, image, runs, before):
    def median(kind, key):
        return statistics.median(r.summary[key] for r in runs[kind])

    def median_cpu(kind):
        cpu = [cpu_s(r) for r in runs[kind]]
        return None if None in cpu else statistics.median(cpu)
    ratios = []
    for kind in runs:
        if kind == 'container':
            continue
        each = [c.summary['images_per_s'] / h.summary['images_per_s']
                for h, c in zip(runs[kind], runs['container'])]
        ratio = median('container', 'images_per_s') / median(kind, 'images_per_s')
        cpu = (median_cpu('container') / median_cpu(kind)
               if median_cpu(kind) and median_cpu('container') else None)
        ratios.append(f'Container / {kind} steady img/s: **{ratio:.3f}** (medians; per round: '
                      f'median {statistics.median(each):.3f}, range {min(each):.3f}-'
                      f'{max(each):.3f}). Target >= {TARGET}: {verdict(ratio >= TARGET)}. '
                      f'CPU seconds of the whole process, container / host: {fmt(cpu, 3)}.')
    rows = [[kind, len(rs), fmt(median(kind, 'images_per_s'), 1),
             fmt(median(kind, 'steady_epoch_s'), 3), fmt(median(kind, 'first_epoch_s'), 2),
             fmt(median(kind, 'host_peak_rss_bytes') / 2**20, 0),
             fmt(median(kind, 'timing_lock_wait_s'), 1), fmt(median_cpu(kind), 1),
             ', '.join(f'{r.summary["images_per_s"]:.0f}' for r in rs),
             ', '.join(fmt(cpu_s(r), 1) for r in rs),
             ' '.join(f'{k} {rs[0].summary["versions"][k]}' for k in ('python', 'tensorflow',
                                                                          'keras', 'numpy'))]
            for kind, rs in runs.items()]
    return '\n'.join([
        f'## Container overhead: {datetime.date.today()}, {platform.node()}, '
        f'{os.cpu_count()} CPUs, load {before} -> {load()}', '',
        f'LR&FS {args.model}, {29 * args.images} synthetic images (scale {args.scale}), batch '
        f'{args.batch_size}, {args.epochs} epochs; {args.pairs} rounds, each kind once a '
        f'round, each round starting with the next kind; image {image}.', '',
        table(['run', 'runs', 'img/s (median)', 'steady epoch s', 'first epoch s',
               'peak RSS MiB', 'lock wait s', 'CPU s', 'img/s of each run',
               'CPU s of each run', 'versions'],
              rows), '',
        *ratios, ''])


if __name__ == '__main__':
    sys.exit(main())
