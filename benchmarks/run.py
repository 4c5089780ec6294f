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
5. Real resolution: photo-like synthetic JPEGs with MAMe's real shapes
   (``--real-images``, capped at ``--real-max-mpx``): bytes per pixel; JPEG
   decoding on one thread at full size and with DCT scaling (ratio 2, 4, 8);
   HR&VS at each ``--real-budgets`` pixel budget decoded on the fly against
   prepared once (``--prepare``), alternated and repeated: img/s, Mpx/s, input
   wait, input capacity (the pipeline drained alone); prepare and stage rates.

6. Reference step: the payload against a plain reference implementation of the
   same step (benchmarks/reference_step.py: keras.applications model, one random
   batch reused, one tf.function step, warm-up, timed steps), alternated and
   repeated: steady img/s of LR&FS ResNet-50 at batch 8 and 224 px (payload
   reading JPEG files, and from memory; reference built for any input size, as
   the payload builds it, and for 224 px only), target >= 0.95; the first epoch's
   overhead against the reference's first step; seconds per new input shape at
   batch 1, split and fused payload step against the reference.

7. Threads on a CPU node: decoding and training share the cores. The payload with
   ``--input-threads`` 0 (tf.data's default pool), 1 and 2, alternated and repeated,
   on real-resolution JPEGs: HR&VS smallcnn (decoding-bound) and LR&FS ResNet-50
   (compute-bound): img/s, input wait, input capacity.

``--sections`` picks which of input (1, 3, 4), hrvs (2), real (5), reference (6) and
threads (7) to run.

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
sys.path.insert(0, REPO)          # run as a script from a checkout
from payload import protocol  # noqa: E402
TIME = '/usr/bin/time'
TARGETS = {'input_ratio': 0.95, 'epoch_time_error': 0.02, 'rss_error': 0.05,
           'reference_ratio': 0.95}


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
            parsed = protocol.parse(line)
            if parsed and parsed[0] == protocol.EPOCH_TAG:
                self.epochs.append(parsed[1])
                self.arrivals.append(now)
            elif parsed:
                self.summary = parsed[1]
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


def measure_decode(data_dir, repeats=2):
    """One thread: images/s and Mpx/s decoding every JPEG of ``data_dir`` at each DCT ratio.

    Run in a subprocess of its own (``--measure-decode``) so that TensorFlow's thread
    pools can be set to one thread before it starts.
    """
    os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    from sizeshape_datasets import decode, mame
    records, _ = mame.read_mame(data_dir)
    blobs = [tf.constant(open(r.path, 'rb').read()) for r in records]
    pixels = sum(r.pixels for r in records)
    out = {'images': len(records), 'pixels': pixels,
           'bytes': sum(os.path.getsize(r.path) for r in records), 'ratios': {}}
    tf.io.decode_jpeg(blobs[0], channels=3)          # warm-up
    for ratio in decode.DCT_RATIOS:
        best = float('inf')
        for _ in range(repeats):
            start = time.perf_counter()
            for blob in blobs:
                tf.io.decode_jpeg(blob, channels=3, ratio=ratio)
            best = min(best, time.perf_counter() - start)
        out['ratios'][ratio] = {'images_per_s': len(blobs) / best, 'mpx_per_s': pixels / best / 1e6}
    return out


def real_resolution(args, workdir, timedir):
    """Section 5's data and runs: {'decode': ..., 'runs': {(budget, mode): [Run]}, ...}."""
    from sizeshape_datasets import synthetic
    root = os.path.join(workdir, 'real')
    start = time.monotonic()
    synthetic.generate(root, images_per_class=1, val_per_class=0, num_classes=args.real_images,
                       scale=1.0, max_mpx=args.real_max_mpx, seed=args.seed)
    generate_s = time.monotonic() - start
    print(f'    made {args.real_images} real-resolution images in {generate_s:.0f} s',
          file=sys.stderr, flush=True)
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), '--measure-decode', root],
                          capture_output=True, text=True, cwd=REPO)
    if proc.returncode != 0:
        raise SystemExit(f'decode measurement failed:\n{proc.stderr[-2000:]}')
    decoded = json.loads(proc.stdout.strip().splitlines()[-1])
    scratch = os.path.join(workdir, 'scratch')
    os.makedirs(scratch, exist_ok=True)
    runs = {}
    plan = []
    for i in range(args.real_repeats):
        for budget in args.real_budgets.split(','):
            for mode in ('on the fly', 'prepared'):    # alternated, so drift hits both
                plan.append((budget, mode, i))
    for n, (budget, mode, i) in enumerate(plan, 1):
        label = f'HR&VS {args.real_model} {budget} {mode} #{i + 1}'
        print(f'[real {n}/{len(plan)}] {label} ...', file=sys.stderr, flush=True)
        run_args = ['--data-dir', root, '--variant', 'hrvs', '--model', args.real_model,
                    '--pixel-budget', budget, '--epochs', args.epochs, '--seed', args.seed,
                    '--stage-dir', scratch]
        if args.peak_gflops:
            run_args += ['--peak-gflops', args.peak_gflops]
        if mode == 'prepared':
            run_args.append('--prepare')
        run = Run(label, run_args, timedir)
        runs.setdefault((budget, mode), []).append(run)
        print(f'    {run.wall_s:.1f} s, {run.summary["images_per_s"]:.2f} img/s',
              file=sys.stderr, flush=True)
    return {'decode': decoded, 'runs': runs, 'generate_s': generate_s}


def render_real(args, real):
    d = real['decode']
    mean_mpx = d['pixels'] / d['images'] / 1e6
    out = [f'### 5. Real resolution: {d["images"]} photo-like JPEGs with MAMe\'s shapes '
           f'(capped at {args.real_max_mpx} Mpx; mean {mean_mpx:.1f} Mpx), quality 90', '',
           f'- {d["bytes"] / d["pixels"]:.3f} bytes per pixel ({d["bytes"] / 1e6:.0f} MB for '
           f'{d["pixels"] / 1e6:.0f} Mpx); made in {real["generate_s"]:.0f} s', '',
           table(['decode, one thread', 'img/s', 'Mpx/s (full-size pixels)'],
                 [[f'ratio {r}' + (' (full size)' if r == '1' else ' (DCT scaling)'),
                   fmt(v['images_per_s'], 1), fmt(v['mpx_per_s'], 0)]
                  for r, v in d['ratios'].items()]), '']
    rows = []
    for (budget, mode), rs in real['runs'].items():
        def med(key):
            values = [r.summary[key] for r in rs if r.summary.get(key) is not None]
            return statistics.median(values) if values else None
        rows.append([budget, mode, len(rs), fmt(med('images_per_s'), 1), fmt(med('mpx_per_s'), 2),
                     fmt(med('input_wait_fraction'), 3), fmt(med('input_images_per_s'), 1),
                     'yes' if any(r.summary['input_bound'] for r in rs) else 'no',
                     fmt(med('prepare_images_per_s'), 1), fmt(med('prepare_s'), 1),
                     fmt(med('stage_gb_per_s'), 2), fmt(med('first_epoch_overhead_s'), 1)])
    out += [f'HR&VS {args.real_model}, batch 1, {args.epochs} epochs per run, runs alternated; '
            'medians over the repeats:', '',
            table(['budget', 'input', 'runs', 'img/s', 'Mpx/s', 'input wait fraction',
                   'input capacity img/s', 'input-bound', 'prepare img/s', 'prepare s',
                   'stage GB/s', 'first-epoch overhead s'], rows), '']
    for budget in args.real_budgets.split(','):
        fly, prep = real['runs'].get((budget, 'on the fly')), real['runs'].get((budget, 'prepared'))
        if fly and prep:
            ratio = (statistics.median(r.summary['images_per_s'] for r in prep)
                     / statistics.median(r.summary['images_per_s'] for r in fly))
            out.append(f'- {budget}: prepared / on the fly throughput **{ratio:.2f}x**')
    return '\n'.join(out + [''])


def reference(mode, *options):
    """One run of benchmarks/reference_step.py; its JSON result."""
    proc = subprocess.run([sys.executable, os.path.join(REPO, 'benchmarks', 'reference_step.py'),
                           mode, *map(str, options)], capture_output=True, text=True, cwd=REPO)
    if proc.returncode != 0:
        raise SystemExit(f'reference {mode} failed:\n{proc.stderr[-2000:]}')
    return json.loads(proc.stdout.strip().splitlines()[-1])


def reference_section(args, workdir, timedir):
    """Section 6's runs: {'steady': {kind: [result]}, 'shapes': {kind: [seconds per shape]}}."""
    from sizeshape_datasets import mame, shapes, synthetic
    lrfs = os.path.join(workdir, 'reference-lrfs')
    classes = max(1, min(len(synthetic.MEDIUMS), args.ref_images // 2))
    synthetic.generate(lrfs, images_per_class=max(1, args.ref_images // classes), val_per_class=0,
                       num_classes=classes, scale=args.lrfs_scale, seed=args.seed)
    hrvs = os.path.join(workdir, 'reference-hrvs')
    synthetic.generate(hrvs, images_per_class=1, val_per_class=0, num_classes=args.ref_shapes,
                       scale=args.hrvs_scale, seed=args.seed)
    budget = shapes.parse_pixel_budget(args.pixel_budget)
    sizes = sorted({shapes.budget_shape(r.width, r.height, budget)
                    for r in mame.read_mame(hrvs)[0]})
    # As many timed reference steps as the payload's steady epochs hold.
    steps = (args.epochs - 1) * (len(mame.read_mame(lrfs)[0]) // args.ref_batch_size)
    common = ['--model', args.ref_model, '--seed', args.seed, '--peak-gflops', '1',
              '--input-probe-seconds', '0']
    lrfs_args = ['--data-dir', lrfs, '--variant', 'lrfs', '--batch-size', args.ref_batch_size,
                 '--image-size', 256, '--crop-size', 224, '--epochs', args.epochs, *common]
    ref_args = ['--model', args.ref_model, '--batch-size', args.ref_batch_size, '--size', 224,
                '--steps', steps, '--seed', args.seed]
    plan = []
    for i in range(args.ref_repeats):      # alternated, so that drift hits every kind
        plan += [('steady', 'payload, JPEG files', lambda: Run('payload files', lrfs_args, timedir)),
                 ('steady', 'payload, in memory',
                  lambda: Run('payload memory', [*lrfs_args, '--input', 'memory'], timedir)),
                 ('steady', 'reference, any input size',
                  lambda: reference('steady', *ref_args, '--input-shape', 'none')),
                 ('steady', 'reference, 224 px only',
                  lambda: reference('steady', *ref_args, '--input-shape', 'fixed'))]
        for kind in ('split', 'fused'):
            plan.append(('shapes', f'payload, {kind} step', lambda kind=kind: Run(
                f'payload {kind}', ['--data-dir', hrvs, '--variant', 'hrvs', '--epochs', 2,
                                    '--pixel-budget', args.pixel_budget, '--step', kind, *common],
                timedir)))
        plan.append(('shapes', 'reference (fused)', lambda: reference(
            'shapes', '--model', args.ref_model, '--seed', args.seed,
            '--shapes', ','.join(f'{h}x{w}' for h, w in sizes))))
    out = {'steady': {}, 'shapes': {}, 'sizes': sizes, 'steps': steps}
    for n, (table_name, kind, start) in enumerate(plan, 1):
        print(f'[reference {n}/{len(plan)}] {kind} ({table_name}) ...', file=sys.stderr, flush=True)
        out[table_name].setdefault(kind, []).append(start())
    return out


def render_reference(args, ref):
    def steady_rate(result):
        return result.summary['images_per_s'] if isinstance(result, Run) else result['images_per_s']

    def first_cost(result):
        return (result.summary['first_epoch_overhead_s'] if isinstance(result, Run)
                else result['first_step_s'])

    rows, medians = [], {}
    for kind, results in ref['steady'].items():
        rates = [steady_rate(r) for r in results]
        medians[kind] = statistics.median(rates)
        rows.append([kind, len(results), fmt(medians[kind]), f'{fmt(min(rates))}–{fmt(max(rates))}',
                     fmt(statistics.median(first_cost(r) for r in results), 1)])
    out = [f'### 6. Reference step: {args.ref_model}, LR&FS batch {args.ref_batch_size} at 224 px '
           f'({ref["steps"]} timed reference steps, {args.epochs} payload epochs), runs '
           'alternated', '',
           table(['implementation', 'runs', 'steady img/s (median)', 'img/s (min–max)',
                  'payload: first-epoch overhead s; reference: first step s'], rows), '']
    base = medians.get('reference, any input size')
    if base:
        for kind in ('payload, JPEG files', 'payload, in memory', 'reference, 224 px only'):
            if kind in medians:
                ratio = medians[kind] / base
                target = (f' (target >= {TARGETS["reference_ratio"]}: '
                          f'{verdict(ratio >= TARGETS["reference_ratio"])})'
                          if kind == 'payload, JPEG files' else '')
                out.append(f'- {kind} / reference, any input size: **{ratio:.3f}**{target}')
    rows, per_shape = [], {}
    for kind, results in ref['shapes'].items():
        costs = [r.summary['trace_seconds_per_shape'] if isinstance(r, Run)
                 else r['seconds_per_shape'] for r in results]
        per_shape[kind] = statistics.median(costs)
        rows.append([kind, len(results), fmt(per_shape[kind], 2),
                     f'{fmt(min(costs), 2)}–{fmt(max(costs), 2)}'])
    shapes_text = ', '.join(f'{h}x{w}' for h, w in ref['sizes'])
    out += ['', f'Seconds per new input shape, HR&VS batch 1, {len(ref["sizes"])} shapes at '
                f'{args.pixel_budget} ({shapes_text}):', '',
            table(['step', 'runs', 's per new shape (median)', 'min–max'], rows), '']
    split, fused = per_shape.get('payload, split step'), per_shape.get('payload, fused step')
    reference_cost = per_shape.get('reference (fused)')
    if split and fused:
        out.append(f'- split / fused: **{split / fused:.2f}** ({fused / split:.1f}x less per shape)')
    if split and reference_cost:
        out.append(f'- payload split / reference: **{split / reference_cost:.2f}**; '
                   f'payload fused / reference: **{fused / reference_cost:.2f}**')
    return '\n'.join(out + [''])


def threads_section(args, workdir, timedir):
    """Section 7's runs: {(workload, input threads): [Run]}."""
    from sizeshape_datasets import synthetic
    root = os.path.join(workdir, 'threads')
    synthetic.generate(root, images_per_class=1, val_per_class=0, num_classes=args.threads_images,
                       scale=1.0, max_mpx=args.threads_max_mpx, seed=args.seed)
    workloads = {
        'HR&VS smallcnn 65k': ['--variant', 'hrvs', '--model', 'smallcnn', '--pixel-budget', '65k'],
        f'LR&FS {args.ref_model} batch 4': ['--variant', 'lrfs', '--model', args.ref_model,
                                             '--batch-size', 4],
    }
    runs = {}
    plan = [(name, n) for _ in range(args.threads_repeats) for name in workloads
            for n in args.threads.split(',')]
    for i, (name, n) in enumerate(plan, 1):
        print(f'[threads {i}/{len(plan)}] {name}, --input-threads {n} ...', file=sys.stderr,
              flush=True)
        runs.setdefault((name, n), []).append(Run(
            f'{name} input threads {n}', ['--data-dir', root, *workloads[name], '--epochs', 3,
                                          '--input-threads', n, '--peak-gflops', 1,
                                          '--seed', args.seed], timedir))
    return runs


def render_threads(args, runs):
    rows = []
    for (name, n), rs in runs.items():
        def med(key):
            return statistics.median(r.summary[key] for r in rs)
        rows.append([name, n if n != '0' else '0 (tf.data default)', len(rs),
                     fmt(med('images_per_s'), 2), fmt(med('input_wait_fraction'), 3),
                     fmt(med('input_images_per_s'), 1), rs[0].summary['cpus_available']])
    return '\n'.join([f'### 7. Threads: {args.threads_images} JPEGs with MAMe\'s shapes (capped at '
                      f'{args.threads_max_mpx} Mpx), runs alternated, medians', '',
                      table(['workload', 'input threads', 'runs', 'img/s', 'input wait fraction',
                             'input capacity img/s', 'CPUs'], rows), ''])


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
    p.add_argument('--hrvs-scale', type=float, default=0.1)
    p.add_argument('--hrvs-batch-size', type=int, default=4, help='padded and bucketed')
    p.add_argument('--pixel-budget', default='65k')
    p.add_argument('--epochs', type=int, default=3)
    p.add_argument('--precision', default='float32')
    p.add_argument('--peak-gflops', type=float,
                   help='peak GFLOP/s for peak_fraction (default: each run measures a matmul)')
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--sections', default='input,hrvs,real,reference,threads',
                   help='comma-separated: input (tables 1, 3, 4), hrvs (2), real (5), '
                        'reference (6), threads (7)')
    p.add_argument('--real-images', type=int, default=29,
                   help='real-resolution JPEGs (one per class, up to 29)')
    p.add_argument('--real-max-mpx', type=float, default=40.0,
                   help='cap on megapixels per real-resolution image')
    p.add_argument('--real-budgets', default='65k,360k', help='HR&VS pixel budgets, comma-separated')
    p.add_argument('--real-repeats', type=int, default=2)
    p.add_argument('--real-model', default='smallcnn')
    p.add_argument('--ref-model', default='resnet50')
    p.add_argument('--ref-images', type=int, default=48, help='LR&FS images of the reference '
                                                              'comparison')
    p.add_argument('--ref-batch-size', type=int, default=8)
    p.add_argument('--ref-shapes', type=int, default=3, help='new HR&VS shapes to time')
    p.add_argument('--ref-repeats', type=int, default=3)
    p.add_argument('--threads', default='0,1,2', help='--input-threads values to compare')
    p.add_argument('--threads-images', type=int, default=12)
    p.add_argument('--threads-max-mpx', type=float, default=10.0)
    p.add_argument('--threads-repeats', type=int, default=2)
    p.add_argument('--measure-decode', metavar='DIR', help=argparse.SUPPRESS)
    p.add_argument('--workdir', help='keep the data and /usr/bin/time reports here '
                                     '(default: a temporary directory, removed)')
    p.add_argument('--json', help='also write every run\'s records to this file')
    args = p.parse_args(argv)
    if args.measure_decode:
        print(json.dumps(measure_decode(args.measure_decode)))
        return 0
    sections = set(args.sections.split(','))
    if not sections or sections - {'input', 'hrvs', 'real', 'reference', 'threads'}:
        p.error(f'--sections takes input, hrvs, real, reference and threads, '
                f'got {args.sections!r}')
    if 'input' in sections and args.repeats < 2:
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
    runs = {'jpeg': [], 'hdf5': [], 'memory': [], 'hrvs': []}
    real = ref = threads = None
    try:
        common = ['--epochs', args.epochs, '--precision', args.precision, '--seed', args.seed]
        if args.peak_gflops:
            common += ['--peak-gflops', args.peak_gflops]
        plan = []
        if sections & {'input', 'hrvs'}:
            lrfs, lrfs_h5, hrvs = make_data(os.path.join(workdir, 'data'), args)
        if 'input' in sections:
            lrfs_args = ['--variant', 'lrfs', '--model', args.lrfs_model,
                         '--batch-size', args.lrfs_batch_size, '--image-size', args.image_size,
                         '--crop-size', args.crop_size, *common]
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
        if 'hrvs' in sections:
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
        if 'real' in sections:
            real = real_resolution(args, workdir, timedir)
        if 'reference' in sections:
            ref = reference_section(args, workdir, timedir)
        if 'threads' in sections:
            threads = threads_section(args, workdir, timedir)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    report = render(args, runs, real, ref, threads, load_before, load(),
                    time.monotonic() - started)
    print(report)
    if args.json:
        every = dict(runs)
        if real:
            every['real'] = [r for rs in real['runs'].values() for r in rs]
        if ref:
            every['reference'] = [r for table_runs in (ref['steady'], ref['shapes'])
                                  for rs in table_runs.values() for r in rs if isinstance(r, Run)]
        if threads:
            every['threads'] = [r for rs in threads.values() for r in rs]
        with open(args.json, 'w') as f:
            json.dump({kind: [{'label': r.label, 'args': r.args, 'epochs': r.epochs,
                               'summary': r.summary, 'wall_s': r.wall_s,
                               'arrivals': r.arrivals, 'time': r.time_report}
                              for r in rs] for kind, rs in every.items()}, f, indent=1)
    return 0


def render(args, runs, real, ref, threads, load_before, load_after, elapsed):
    real_runs = [r for rs in real['runs'].values() for r in rs] if real else []
    ref_runs = ([r for table_runs in (ref['steady'], ref['shapes']) for rs in table_runs.values()
                 for r in rs if isinstance(r, Run)] if ref else [])
    thread_runs = [r for rs in threads.values() for r in rs] if threads else []
    all_runs = ([r for kind in ('jpeg', 'hdf5', 'memory', 'hrvs') for r in runs[kind]]
                + real_runs + ref_runs + thread_runs)
    first = all_runs[0].summary
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

    if runs['jpeg']:
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
        peaks = [r.summary for r in all_runs]
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
    if len(steady) >= 2:
        mean = statistics.mean(steady)
        cv = statistics.stdev(steady) / mean
        out += [f'### 4. Spread over {len(steady)} repeats (LR&FS {args.lrfs_model}, JPEG files)',
                '', table(['quantity', 'mean', 'stdev', 'CV', 'min', 'max'],
                          [['steady epoch s', fmt(mean, 3), fmt(statistics.stdev(steady), 3),
                            f'{100 * cv:.1f}%', fmt(min(steady), 3), fmt(max(steady), 3)]]), '']

    # 5. Real resolution
    if real:
        out.append(render_real(args, real))
    # 6. Reference step
    if ref:
        out.append(render_reference(args, ref))
    # 7. Threads
    if threads:
        out.append(render_threads(args, threads))
    return '\n'.join(out)


if __name__ == '__main__':
    sys.exit(main())
