"""Section 7: input and training threads sharing a CPU node."""
import os
import statistics
import sys

from harness import Run, fmt, table


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
        def med(key, rs=rs):
            return statistics.median(r.summary[key] for r in rs)
        rows.append([name, n if n != '0' else '0 (tf.data default)', len(rs),
                     fmt(med('images_per_s'), 2), fmt(med('input_wait_fraction'), 3),
                     fmt(med('input_images_per_s'), 1), rs[0].summary['cpus_available']])
    return '\n'.join([f'### 7. Threads: {args.threads_images} JPEGs with MAMe\'s shapes (capped at '
                      f'{args.threads_max_mpx} Mpx), runs alternated, medians', '',
                      table(['workload', 'input threads', 'runs', 'img/s', 'input wait fraction',
                             'input capacity img/s', 'CPUs'], rows), ''])
