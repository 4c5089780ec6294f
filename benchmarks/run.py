#!/usr/bin/env python3
"""Benchmark of the payload itself: what the suite's own input pipeline, HR&VS strategies
and measurements cost, each against a baseline in the same run (docs/benchmarks.md:
the sections, their targets, and dated results).

    python benchmarks/run.py                # default size: about 35 minutes on 2 cores
    python benchmarks/run.py --help         # sizes, models, repeats, --sections
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time

from harness import Run, TARGETS, TIME, fmt, load, make_data, pct, table, verdict
from real_resolution import measure_decode, real_resolution, render_real
from against_reference import reference_section, render_reference
from threads import render_threads, threads_section

from ssb_contract.options import PixelBudget, default


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument('--lrfs-model', default='resnet50')
    p.add_argument('--lrfs-images', type=int, default=32, help='LR&FS training images')
    p.add_argument('--lrfs-batch-size', type=int, default=default('lrfs_batch_size'))
    p.add_argument('--lrfs-scale', type=float, default=0.1,
                   help='synthetic LR&FS JPEGs: linear scale of MAMe shapes (0.1: about 270 px)')
    p.add_argument('--image-size', type=int, default=default('image_size'))
    p.add_argument('--crop-size', type=int, default=default('crop_size'))
    p.add_argument('--repeats', type=int, default=5,
                   help='LR&FS runs reading JPEG files (the spread is over these)')
    p.add_argument('--memory-repeats', type=int, default=2, help='LR&FS runs on in-memory batches')
    p.add_argument('--hdf5-repeats', type=int, default=1, help='LR&FS runs reading the HDF5 file')
    p.add_argument('--hrvs-model', default='smallcnn')
    p.add_argument('--hrvs-images-per-class', type=int, default=2, help='29 classes')
    p.add_argument('--hrvs-scale', type=float, default=0.1)
    # A batch of several images: what padded and bucketed batching are for (single's is 1).
    p.add_argument('--hrvs-batch-size', type=int, default=4, help='padded and bucketed')
    p.add_argument('--pixel-budget', default=default('pixel_budget'))
    p.add_argument('--epochs', type=int, default=3, help='per run (fewer than the suite\'s '
                                                          'default: the benchmark runs many)')
    p.add_argument('--precision', default=default('precision'))
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
    p.add_argument('--real-budgets', default='65k,360k',
                   help='HR&VS pixel budgets, comma-separated')
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
            ref = reference_section(args, PixelBudget(args.pixel_budget), workdir, timedir)
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
           f'- versions: payload {first["versions"]["payload"]}, '
           f'TensorFlow {first["versions"]["tensorflow"]}, Keras {first["versions"]["keras"]}, '
           f'Python {first["versions"]["python"]}',
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
                         fmt(statistics.median(r.summary['first_epoch_overhead_s'] for r in rs),
                             1)])
        out += [f'### 1. Input pipeline: LR&FS {args.lrfs_model}, '
                f'{first["images_per_epoch"]} images, batch {args.lrfs_batch_size}, '
                f'{args.image_size} px resized, {args.crop_size} px crop',
                '', table(['input', 'runs', 'img/s (median)', 'img/s (min–max)', 'GFLOP/s',
                           'peak fraction', 'input wait fraction', 'first-epoch overhead s'],
                          rows), '']
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
                     f'{pct(m_err)} '
                     f'({verdict(None if m_err is None else abs(m_err) <= TARGETS["rss_error"])})',
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
