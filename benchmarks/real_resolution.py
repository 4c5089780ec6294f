"""Section 5: real resolution: decoding photo-like JPEGs with MAMe's real shapes, and HR&VS
decoded on the fly against prepared once."""
import json
import os
import statistics
import subprocess
import sys
import time

from harness import REPO, Run, fmt, table


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
    run_py = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'run.py')
    proc = subprocess.run([sys.executable, run_py, '--measure-decode', root],
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
        def med(key, rs=rs):
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
