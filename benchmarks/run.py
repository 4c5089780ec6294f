#!/usr/bin/env python3
"""Benchmark of the payload itself: what the suite's own input pipeline, HR&VS
strategies and measurements cost, in one run on one machine.

    python benchmarks/run.py                # default size: several minutes on 2 cores
    python benchmarks/run.py --help         # sizes, models, repeats

Every payload run is a subprocess (``python -m payload``) wrapped in
``/usr/bin/time -v`` (Debian/Ubuntu: ``apt-get install -y time``), and its
stdout is read line by line as it is written. It prints markdown tables:

1. Input pipeline: LR&FS throughput reading and decoding JPEG files (and the
   packed HDF5 file) every epoch, against the same model on the same batches
   held in memory (``--input memory``: one epoch read before training, then
   replayed). Target: files / memory >= 0.95.
2. HR&VS strategies (single, padded, bucketed): distinct input shapes, traced
   graphs, first-epoch overhead, padded fraction, Mpx/s, GFLOP/s.
3. Fidelity of every run:
   - epoch time: the payload's reported seconds of epochs 2..N, against the
     time between the arrival of the SSB-EPOCH line of epoch 1 and that of
     epoch N, on this script's clock. The external interval also holds all the
     payload does between epochs (emitting, counting FLOPs, resetting memory
     statistics), which the reported times leave out. Target: within 2%.
   - peak RSS: the payload's ``host_peak_rss_bytes`` (its ``ru_maxrss`` after
     the last epoch) against ``/usr/bin/time -v``'s "Maximum resident set size"
     of the whole process, exit included. Target: within 5%.
   - not a target, shown: process wall time minus the payload's ``setup_s``
     (process start to training start) and its epoch times, i.e. what the
     payload's own numbers do not account for (summary, interpreter exit).
4. Spread: coefficient of variation (stdev / mean) of the steady epoch time of
   the repeated LR&FS file runs.

Misses of a target are printed as such. The machine is measured as it is: the
load average before and after is printed, since other jobs distort every number.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIME = '/usr/bin/time'
TARGETS = {'input_ratio': 0.95, 'epoch_time_error': 0.02, 'rss_error': 0.05}


class Run:
    """One payload subprocess, its output lines with arrival times, and /usr/bin/time's report."""

    def __init__(self, label, args, workdir):
        self.label, self.args = label, list(map(str, args))
        self.epochs, self.summary, self.arrivals = [], None, []
        self.time_report, self.stderr = {}, ''
        time_file = os.path.join(workdir, f'time-{len(os.listdir(workdir))}.txt')
        cmd = [sys.executable, '-m', 'payload', *self.args]
        if os.access(TIME, os.X_OK):
            cmd = [TIME, '-v', '-o', time_file] + cmd
        env = dict(os.environ, PYTHONUNBUFFERED='1')
        start = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, bufsize=1, env=env)
        err = []
        reader = threading.Thread(target=lambda: err.append(proc.stderr.read()))
        reader.start()
        for line in proc.stdout:
            now = time.monotonic()
            tag, _, body = line.partition(' ')
            if tag == 'SSB-EPOCH':
                self.epochs.append(json.loads(body))
                self.arrivals.append(now)
            elif tag == 'SSB-SUMMARY':
                self.summary = json.loads(body)
        proc.wait()
        reader.join()
        self.wall_s = time.monotonic() - start
        self.stderr = ''.join(err)
        if proc.returncode != 0 or self.summary is None:
            tail = '\n'.join(self.stderr.splitlines()[-5:])
            raise SystemExit(f'{label}: payload failed (exit {proc.returncode}):\n{tail}')
        if os.path.exists(time_file):
            with open(time_file) as f:
                for line in f:
                    key, sep, value = line.strip().rpartition(': ')
                    if sep:
                        self.time_report[key] = value

    # Fidelity --------------------------------------------------------------
    def reported_epochs_s(self):
        return sum(e['seconds'] for e in self.epochs[1:])

    def external_epochs_s(self):
        return self.arrivals[-1] - self.arrivals[0]

    def epoch_time_error(self):
        return self.reported_epochs_s() / self.external_epochs_s() - 1

    def time_rss_bytes(self):
        kib = self.time_report.get('Maximum resident set size (kbytes)')
        return int(kib) * 1024 if kib else None

    def rss_error(self):
        external = self.time_rss_bytes()
        return self.summary['host_peak_rss_bytes'] / external - 1 if external else None

    def unaccounted_s(self):
        setup = self.summary.get('setup_s')
        if setup is None:
            return None
        return self.wall_s - setup - sum(e['seconds'] for e in self.epochs)


def pct(x, digits=1):
    return 'n/a' if x is None else f'{100 * x:+.{digits}f}%'


def verdict(ok):
    return 'n/a' if ok is None else ('met' if ok else '**missed**')


def fmt(x, digits=2):
    return 'n/a' if x is None else f'{x:.{digits}f}'


def table(header, rows):
    lines = ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    lines += ['| ' + ' | '.join(map(str, row)) + ' |' for row in rows]
    return '\n'.join(lines)


def make_data(workdir, args):
    from sizeshape_datasets import hdf5, synthetic
    lrfs = os.path.join(workdir, 'lrfs')
    classes = max(1, min(len(synthetic.MEDIUMS), args.lrfs_images // 2))
    synthetic.generate(lrfs, images_per_class=max(1, args.lrfs_images // classes),
                       val_per_class=0, num_classes=classes, scale=args.lrfs_scale,
                       seed=args.seed)
    hrvs = os.path.join(workdir, 'hrvs')
    synthetic.generate(hrvs, images_per_class=args.hrvs_images_per_class, val_per_class=0,
                       scale=args.hrvs_scale, seed=args.seed)
    lrfs_h5 = os.path.join(workdir, 'lrfs.h5')
    hdf5.pack(lrfs, lrfs_h5)
    return lrfs, lrfs_h5, hrvs


def load():
    try:
        return ' / '.join(f'{x:.2f}' for x in os.getloadavg())
    except OSError:
        return 'n/a'


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument('--lrfs-model', default='resnet50')
    p.add_argument('--lrfs-images', type=int, default=32, help='LR&FS training images')
    p.add_argument('--lrfs-batch-size', type=int, default=16)
    p.add_argument('--lrfs-scale', type=float, default=0.1,
                   help='synthetic LR&FS JPEGs: linear scale of MAMe shapes (0.1: about 270 px)')
    p.add_argument('--image-size', type=int, default=256)
    p.add_argument('--crop-size', type=int, default=224)
    p.add_argument('--repeats', type=int, default=5,
                   help='LR&FS runs reading JPEG files (the spread is over these)')
    p.add_argument('--memory-repeats', type=int, default=2, help='LR&FS runs on in-memory batches')
    p.add_argument('--hdf5-repeats', type=int, default=1, help='LR&FS runs reading the HDF5 file')
    p.add_argument('--hrvs-model', default='smallcnn')
    p.add_argument('--hrvs-images-per-class', type=int, default=2, help='29 classes')
    p.add_argument('--hrvs-scale', type=float, default=0.05)
    p.add_argument('--hrvs-batch-size', type=int, default=4, help='padded and bucketed')
    p.add_argument('--pixel-budget', default='65k')
    p.add_argument('--epochs', type=int, default=3)
    p.add_argument('--precision', default='float32')
    p.add_argument('--peak-gflops', type=float,
                   help='peak GFLOP/s for peak_fraction (default: each run measures a matmul)')
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--workdir', help='keep the data and /usr/bin/time reports here '
                                     '(default: a temporary directory, removed)')
    p.add_argument('--json', help='also write every run\'s records to this file')
    args = p.parse_args(argv)
    if args.repeats < 2:
        p.error('--repeats must be >= 2 (the spread needs two runs)')

    started = time.monotonic()
    workdir = args.workdir or tempfile.mkdtemp(prefix='ssb-bench-')
    os.makedirs(workdir, exist_ok=True)
    timedir = os.path.join(workdir, 'time')
    os.makedirs(timedir, exist_ok=True)
    if not os.access(TIME, os.X_OK):
        print(f'note: {TIME} not found (Debian/Ubuntu: apt-get install -y time); '
              'the RSS comparison is skipped', file=sys.stderr)
    load_before = load()
    try:
        lrfs, lrfs_h5, hrvs = make_data(os.path.join(workdir, 'data'), args)
        common = ['--epochs', args.epochs, '--precision', args.precision, '--seed', args.seed]
        if args.peak_gflops:
            common += ['--peak-gflops', args.peak_gflops]
        lrfs_args = ['--variant', 'lrfs', '--model', args.lrfs_model,
                     '--batch-size', args.lrfs_batch_size, '--image-size', args.image_size,
                     '--crop-size', args.crop_size, *common]
        runs = {'jpeg': [], 'hdf5': [], 'memory': [], 'hrvs': []}
        plan = []
        for i in range(max(args.repeats, args.memory_repeats, args.hdf5_repeats)):
            if i < args.repeats:
                plan.append(('jpeg', f'LR&FS {args.lrfs_model} JPEG files #{i + 1}',
                             ['--data-dir', lrfs, *lrfs_args]))
            if i < args.memory_repeats:
                plan.append(('memory', f'LR&FS {args.lrfs_model} memory #{i + 1}',
                             ['--data-dir', lrfs, '--input', 'memory', *lrfs_args]))
            if i < args.hdf5_repeats:
                plan.append(('hdf5', f'LR&FS {args.lrfs_model} HDF5 #{i + 1}',
                             ['--data-dir', lrfs_h5, *lrfs_args]))
        for strategy in ('single', 'padded', 'bucketed'):
            batch = 1 if strategy == 'single' else args.hrvs_batch_size
            plan.append(('hrvs', f'HR&VS {args.hrvs_model} {strategy}',
                         ['--data-dir', hrvs, '--variant', 'hrvs', '--model', args.hrvs_model,
                          '--hrvs-batching', strategy, '--batch-size', batch,
                          '--pixel-budget', args.pixel_budget, *common]))
        for n, (kind, label, run_args) in enumerate(plan, 1):
            print(f'[{n}/{len(plan)}] {label} ...', file=sys.stderr, flush=True)
            run = Run(label, run_args, timedir)
            runs[kind].append(run)
            print(f'    {run.wall_s:.1f} s, {run.summary["images_per_s"]:.2f} img/s',
                  file=sys.stderr, flush=True)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    report = render(args, runs, load_before, load(), time.monotonic() - started)
    print(report)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({kind: [{'label': r.label, 'args': r.args, 'epochs': r.epochs,
                               'summary': r.summary, 'wall_s': r.wall_s,
                               'arrivals': r.arrivals, 'time': r.time_report}
                              for r in rs] for kind, rs in runs.items()}, f, indent=1)
    return 0


def render(args, runs, load_before, load_after, elapsed):
    first = runs['jpeg'][0].summary
    out = [f'## size-shape-bench payload benchmark, {datetime.date.today().isoformat()}', '',
           f'- machine: {"; ".join(first["devices"])}; {platform.platform()}',
           f'- versions: TensorFlow {first["versions"]["tensorflow"]}, '
           f'Keras {first["versions"]["keras"]}, Python {first["versions"]["python"]}',
           f'- load average (1/5/15 min) before: {load_before}; after: {load_after}',
           f'- precision {args.precision}; {args.epochs} epochs per run, steady = median of '
           f'epochs 2..{args.epochs}; benchmark wall time {elapsed / 60:.1f} min', '']

    # 1. Input pipeline
    def steady_rates(rs):
        return [r.summary['images_per_s'] for r in rs]

    rows = []
    for kind, name in (('jpeg', 'JPEG files'), ('hdf5', 'HDF5 file'), ('memory', 'in memory')):
        rs = runs[kind]
        if not rs:
            continue
        rates = steady_rates(rs)
        rows.append([name, len(rs), fmt(statistics.median(rates)),
                     f'{fmt(min(rates))}–{fmt(max(rates))}',
                     fmt(statistics.median(r.summary['gflops_per_s'] for r in rs), 1),
                     fmt(statistics.median(r.summary['peak_fraction'] for r in rs), 3),
                     fmt(statistics.median(r.summary['input_wait_fraction'] for r in rs), 4),
                     fmt(statistics.median(r.summary['first_epoch_overhead_s'] for r in rs), 1)])
    out += [f'### 1. Input pipeline: LR&FS {args.lrfs_model}, {first["images_per_epoch"]} images, '
            f'batch {args.lrfs_batch_size}, {args.image_size} px resized, {args.crop_size} px crop',
            '', table(['input', 'runs', 'img/s (median)', 'img/s (min–max)', 'GFLOP/s',
                       'peak fraction', 'input wait fraction', 'first-epoch overhead s'], rows), '']
    memory = statistics.median(steady_rates(runs['memory'])) if runs['memory'] else None
    for kind, name in (('jpeg', 'JPEG files'), ('hdf5', 'HDF5 file')):
        if runs[kind] and memory:
            ratio = statistics.median(steady_rates(runs[kind])) / memory
            out.append(f'- {name} / in memory throughput: **{ratio:.3f}** (target >= '
                       f'{TARGETS["input_ratio"]}: {verdict(ratio >= TARGETS["input_ratio"])})')
    peaks = [r.summary for rs in runs.values() for r in rs]
    out += [f'- peak: {fmt(statistics.median(s["peak_gflops"] for s in peaks), 0)} GFLOP/s '
            f'(median over runs; {peaks[0]["peak_source"]}; range '
            f'{fmt(min(s["peak_gflops"] for s in peaks), 0)}–'
            f'{fmt(max(s["peak_gflops"] for s in peaks), 0)})',
            f'- FLOPs: {peaks[0]["flops_convention"]}', '']

    # 2. HR&VS strategies
    rows = []
    for r in runs['hrvs']:
        s = r.summary
        rows.append([s['hrvs_batching'], s['batch_size'], s['distinct_shapes'], s['traced_graphs'],
                     sum(e['traces'] for e in r.epochs[1:]),
                     fmt(s['first_epoch_s'], 1), fmt(s['steady_epoch_s'], 2),
                     fmt(s['first_epoch_overhead_s'], 1), fmt(s['padded_fraction'], 3),
                     fmt(s['mpx_per_s'], 2), fmt(s['images_per_s'], 1), fmt(s['gflops_per_s'], 1)])
    if rows:
        s = runs['hrvs'][0].summary
        out += [f'### 2. HR&VS strategies: {args.hrvs_model}, {s["images_per_epoch"]} images, '
                f'pixel budget {args.pixel_budget}', '',
                table(['batching', 'batch', 'distinct shapes', 'traced graphs',
                       'traces in epochs 2..N', 'first epoch s',
                       'steady epoch s', 'first-epoch overhead s', 'padded fraction',
                       'Mpx/s (real pixels)', 'img/s', 'GFLOP/s (incl. padding)'], rows), '']

    # 3. Fidelity
    rows = []
    all_runs = [r for kind in ('jpeg', 'hdf5', 'memory', 'hrvs') for r in runs[kind]]
    for r in all_runs:
        t_err, m_err = r.epoch_time_error(), r.rss_error()
        rows.append([r.label, fmt(r.reported_epochs_s(), 3), fmt(r.external_epochs_s(), 3),
                     f'{pct(t_err, 2)} ({verdict(abs(t_err) <= TARGETS["epoch_time_error"])})',
                     fmt(r.summary['host_peak_rss_bytes'] / 2**20, 0),
                     fmt(r.time_rss_bytes() / 2**20, 0) if r.time_rss_bytes() else 'n/a',
                     f'{pct(m_err)} ({verdict(None if m_err is None else abs(m_err) <= TARGETS["rss_error"])})',
                     fmt(r.wall_s, 1), fmt(r.summary.get('setup_s'), 1), fmt(r.unaccounted_s(), 1)])
    worst_t = max(abs(r.epoch_time_error()) for r in all_runs)
    rss = [abs(r.rss_error()) for r in all_runs if r.rss_error() is not None]
    out += ['### 3. Fidelity: payload-reported vs externally measured', '',
            table(['run', 'reported epochs 2..N s', 'external s', 'error (target 2%)',
                   'payload peak RSS MiB', 'time -v max RSS MiB', 'error (target 5%)',
                   'process wall s', 'setup_s', 'not accounted s'], rows), '',
            f'- epoch time: worst error {100 * worst_t:.2f}% '
            f'({verdict(worst_t <= TARGETS["epoch_time_error"])} in every run)'
            if worst_t <= TARGETS['epoch_time_error'] else
            f'- epoch time: worst error {100 * worst_t:.2f}% (**missed** the 2% target)',
            (f'- peak RSS: worst error {100 * max(rss):.2f}% '
             f'({"met" if max(rss) <= TARGETS["rss_error"] else "**missed**"} the 5% target)')
            if rss else '- peak RSS: not compared (no /usr/bin/time)', '']

    # 4. Spread
    steady = [r.summary['steady_epoch_s'] for r in runs['jpeg']]
    mean = statistics.mean(steady)
    cv = statistics.stdev(steady) / mean
    out += [f'### 4. Spread over {len(steady)} repeats (LR&FS {args.lrfs_model}, JPEG files)', '',
            table(['quantity', 'mean', 'stdev', 'CV', 'min', 'max'],
                  [['steady epoch s', fmt(mean, 3), fmt(statistics.stdev(steady), 3),
                    f'{100 * cv:.1f}%', fmt(min(steady), 3), fmt(max(steady), 3)]]), '']
    return '\n'.join(out)


if __name__ == '__main__':
    sys.exit(main())
