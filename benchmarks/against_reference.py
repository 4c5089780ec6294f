"""Section 6: the payload against a plain reference implementation of the same step
(reference_step.py), alternated and repeated."""
import json
import os
import statistics
import subprocess
import sys

from harness import REPO, Run, TARGETS, fmt, table, verdict

from ssb_contract.options import default

CROP = default('crop_size')       # the payload's LR&FS input: the reference trains at it


def reference(mode, *options):
    """One run of benchmarks/reference_step.py; its JSON result."""
    proc = subprocess.run([sys.executable, os.path.join(REPO, 'benchmarks', 'reference_step.py'),
                           mode, *map(str, options)], capture_output=True, text=True, cwd=REPO)
    if proc.returncode != 0:
        raise SystemExit(f'reference {mode} failed:\n{proc.stderr[-2000:]}')
    return json.loads(proc.stdout.strip().splitlines()[-1])


def reference_section(args, budget, workdir, timedir):
    """Section 6's runs: {'steady': {kind: [result]}, 'shapes': {kind: [seconds per shape]}},
    HR&VS's at ``budget`` (a PixelBudget)."""
    from sizeshape_datasets import mame, shapes, synthetic
    lrfs = os.path.join(workdir, 'reference-lrfs')
    classes = max(1, min(len(synthetic.MEDIUMS), args.ref_images // 2))
    synthetic.generate(lrfs, images_per_class=max(1, args.ref_images // classes), val_per_class=0,
                       num_classes=classes, scale=args.lrfs_scale, seed=args.seed)
    hrvs = os.path.join(workdir, 'reference-hrvs')
    synthetic.generate(hrvs, images_per_class=1, val_per_class=0, num_classes=args.ref_shapes,
                       scale=args.hrvs_scale, seed=args.seed)
    sizes = sorted({shapes.budget_shape(r.width, r.height, budget.pixels)
                    for r in mame.read_mame(hrvs)[0]})
    # As many timed reference steps as the payload's steady epochs hold.
    steps = (args.epochs - 1) * (len(mame.read_mame(lrfs)[0]) // args.ref_batch_size)
    common = ['--model', args.ref_model, '--seed', args.seed, '--peak-gflops', '1',
              '--input-probe-seconds', '0']
    # The payload at its default image and crop size; the reference at that crop.
    lrfs_args = ['--data-dir', lrfs, '--variant', 'lrfs', '--batch-size', args.ref_batch_size,
                 '--epochs', args.epochs, *common]
    ref_args = ['--model', args.ref_model, '--batch-size', args.ref_batch_size, '--size', CROP,
                '--steps', steps, '--seed', args.seed]
    plan = []
    for _ in range(args.ref_repeats):      # alternated, so that drift hits every kind
        plan += [('steady', 'payload, JPEG files',
                  lambda: Run('payload files', lrfs_args, timedir)),
                 ('steady', 'payload, in memory',
                  lambda: Run('payload memory', [*lrfs_args, '--input', 'memory'], timedir)),
                 ('steady', 'reference, any input size',
                  lambda: reference('steady', *ref_args, '--input-shape', 'none')),
                 ('steady', f'reference, {CROP} px only',
                  lambda: reference('steady', *ref_args, '--input-shape', 'fixed'))]
        for kind in ('split', 'fused'):
            plan.append(('shapes', f'payload, {kind} step', lambda kind=kind: Run(
                f'payload {kind}', ['--data-dir', hrvs, '--variant', 'hrvs', '--epochs', 2,
                                    '--pixel-budget', budget, '--step', kind, *common],
                timedir)))
        plan.append(('shapes', 'reference (fused)', lambda: reference(
            'shapes', '--model', args.ref_model, '--seed', args.seed,
            '--shapes', ','.join(f'{h}x{w}' for h, w in sizes))))
    out = {'steady': {}, 'shapes': {}, 'sizes': sizes, 'steps': steps, 'budget': budget}
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
    out = [f'### 6. Reference step: {args.ref_model}, LR&FS batch {args.ref_batch_size} at '
           f'{CROP} px '
           f'({ref["steps"]} timed reference steps, {args.epochs} payload epochs), runs '
           'alternated', '',
           table(['implementation', 'runs', 'steady img/s (median)', 'img/s (min–max)',
                  'payload: first-epoch overhead s; reference: first step s'], rows), '']
    base = medians.get('reference, any input size')
    if base:
        for kind in ('payload, JPEG files', 'payload, in memory', f'reference, {CROP} px only'):
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
                f'{ref["budget"]} ({shapes_text}):', '',
            table(['step', 'runs', 's per new shape (median)', 'min–max'], rows), '']
    split, fused = per_shape.get('payload, split step'), per_shape.get('payload, fused step')
    reference_cost = per_shape.get('reference (fused)')
    if split and fused:
        out.append(f'- split / fused: **{split / fused:.2f}** '
                   f'({fused / split:.1f}x less per shape)')
    if split and reference_cost:
        out.append(f'- payload split / reference: **{split / reference_cost:.2f}**; '
                   f'payload fused / reference: **{fused / reference_cost:.2f}**')
    return '\n'.join(out + [''])
