"""What ``ssb-references compare`` writes: ``compare.csv`` (every compared value) and
``compare.md`` (the paper's grouping: per model, each variant's epoch time, throughputs,
peak memory and energy, then the gap's ratios per side; what was left out and why)."""
import csv
import os

from ssb_contract import perf
from ssb_contract.options import VARIANTS, VARIANT_LABELS

from ssb_references.compare.compare import GAP_TEST, MIN_RUNS, RULES
from ssb_references.judge import stats
from ssb_references.runs.text import markdown, num

CSV_COLUMNS = ['system', 'partition', 'model', 'variant', 'variable', 'unit', 'n', 'median',
               'cv', 'ratio', 'ci_low', 'ci_high', 'significant']
#: The TrainingTest variables of the markdown table (the CSV has every compared one).
TABLE_VARIABLES = ['steady_epoch_time', 'throughput', 'pixel_throughput', 'host_peak_memory',
                   'device_peak_memory', 'energy_per_epoch', 'energy_per_image']
GAP = 'hrvs_lrfs_time_per_mpx'


def variant_text(row):
    """The CSV's variant: lrfs, hrvs or gap, with the scale when it is not 'single'."""
    text = row.variant or 'gap'
    return text if row.scale == 'single' else f'{text} ({row.scale})'


def write_csv(comparison, path):
    with open(path, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        for r in comparison.rows:
            iv = r.interval
            w.writerow([r.side, r.partition, r.model, variant_text(r), r.variable, r.unit, r.n,
                        f'{r.median:.6g}', '' if r.cv is None else f'{r.cv:.4f}',
                        '' if r.ratio is None else f'{r.ratio:.4f}',
                        '' if iv is None else f'{iv.low:.4f}',
                        '' if iv is None else f'{iv.high:.4f}', r.significant])
    return path


def direction(row):
    """'better', 'worse' or 'differs' for a significant row, by the variable's contract."""
    better = perf.BY_NAME[row.variable].better
    if better == 'exact':
        return 'differs'
    return 'better' if (row.ratio > 1) == (better == 'higher') else 'worse'


def cell(row):
    if row is None:
        return '-'
    spread = f', cv {row.cv:.1%}' if row.cv is not None else ''
    text = f'{num(row.median)} (n={row.n}{spread})'
    if row.ratio is None:
        return text
    ratio = f'{row.ratio:.3g}x'
    if row.interval is not None:
        ratio += f' [{row.interval.low:.3g}, {row.interval.high:.3g}]'
    if row.significant == 'yes':
        return f'{text}: **{ratio}** \\* {direction(row)}'
    if row.significant == 'no':
        return f'{text}: {ratio} same'
    return f'{text}: {ratio} ({row.significant}: no interval)'


def _groups(rows):
    """{(model, scale): {(test, variant, variable): {side: row}}}, in the contract's order."""
    out = {}
    for r in rows:
        out.setdefault((r.model, r.scale), {}).setdefault(
            (r.test, r.variant, r.variable), {})[r.side] = r
    return out


def _title(name):
    return perf.BY_NAME[name].title


def tables(comparison):
    """The markdown sections, one per model and scale."""
    sides = comparison.sides
    out = []
    for (model, scale), by_var in sorted(_groups(comparison.rows).items()):
        out.append(f'## {model}, scale {scale}\n')
        head = ['variable', 'variant', 'unit'] + sides
        body = []
        for name in TABLE_VARIABLES:
            for variant in VARIANTS:
                per_side = by_var.get(('TrainingTest', variant, name))
                if per_side:
                    unit = next(iter(per_side.values())).unit
                    body.append([_title(name), VARIANT_LABELS[variant], unit] +
                                [cell(per_side.get(s)) for s in sides])
        if body:
            out.append(markdown(head, body) + '\n')
        gap = [[_title(v.name), v.unit] + [cell(by_var[(GAP_TEST, '', v.name)].get(s))
                                          for s in sides]
               for v in perf.perf_vars(GAP_TEST)
               if not v.spread_of and (GAP_TEST, '', v.name) in by_var]
        if gap:
            out.append('HR&VS over LR&FS (SizeShapeGap), per side:\n')
            out.append(markdown(['gap ratio', 'unit'] + sides, gap) + '\n')
    return out


def largest_gap(comparison):
    """The closing line: the side whose HR&VS/LR&FS time per megapixel is largest."""
    lines = []
    for (model, scale), by_var in sorted(_groups(comparison.rows).items()):
        per_side = by_var.get((GAP_TEST, '', GAP))
        if not per_side:
            continue
        top = max(per_side.values(), key=lambda r: r.median)
        base = per_side.get(comparison.sides[0])
        if top is base:
            others = [r for r in per_side.values() if r is not base]
            against = max(others, key=lambda r: r.median)
            how = f'{against.side}: {against.median:.3g}'
            judged = against
        else:
            how = f'{base.side}: {base.median:.3g}'
            judged = top
        if judged.interval is not None:
            sure = ('a significant difference' if judged.significant == 'yes'
                    else 'not a significant difference')
            how += (f'; {judged.side}/{base.side} {judged.ratio:.3g}x '
                    f'[{judged.interval.low:.3g}, {judged.interval.high:.3g}], {sure}')
        else:
            how += f'; too few runs to say how sure ({judged.significant})'
        lines.append(f'Largest HR&VS/LR&FS gap ({GAP}), {model} at scale {scale}: '
                     f'**{top.side}**, {top.median:.3g}x ({how}).')
    return lines or [f'No side has {GAP} (SizeShapeGap runs) to compare.']


def write_markdown(comparison, path, picture=None):
    c = comparison
    what = 'systems side by side' if c.mode == 'systems' else 'before and after'
    lines = [f'# size-shape-bench: {" vs ".join(c.sides)} ({what})', '']
    for side in c.sides:
        if side in c.described:
            lines.append(f'- **{side}**: {c.described[side]}')
    lines += ['', f'Each cell: median (runs, coefficient of variation); then, against '
              f'**{c.sides[0]}**, the ratio of geometric means with its '
              f'{stats.percent(c.confidence)} Welch interval. **Bold** \\*: the interval '
              f'excludes 1 (better or worse by the variable\'s direction); "same": it does '
              f'not. Rules: {RULES}.', '']
    if picture:
        lines += [f'![{what}]({os.path.basename(picture)})', '']
    lines += tables(c)
    lines += ['Every compared variable: compare.csv.', '']
    lines += [f'## Left out ({len(c.left_out)})', '']
    lines += [f'- {x}' for x in c.left_out] or ['- nothing']
    if c.notes:
        lines += ['', f'## Too few runs (fewer than {MIN_RUNS})', '']
        lines += [f'- {x}' for x in c.notes]
    lines += [''] + largest_gap(c) + ['']
    with open(path, 'w') as f:
        f.write('\n'.join(lines))
    return path
