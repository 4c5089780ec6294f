"""Tables and PNG plots of a system's runs: LR&FS next to HR&VS, and trends with references.

- ``<system>-summary.md`` / ``.csv``: per partition x model x variable, the
  median of the latest runs of each variant and the HR&VS / LR&FS ratio;
- ``<system>-lrfs-vs-hrvs.png``: epoch time, Mpx/s and peak memory, the two
  variants side by side (bars: median; whiskers: min and max);
- ``<system>-trend.png``: every run of each key over time, with the reference
  band of ``<reference dir>/<system>.yaml`` shaded and the reference dashed;
- with TimeToAccuracy runs: a time-to-accuracy table in the markdown file and
  ``<system>-accuracy.png``, the newest run's validation accuracy per epoch
  against the seconds since its first touch of the data, with the target.

Plots need matplotlib (``pip install 'size-shape-bench[report]'``).
"""
import csv
import os
import statistics

from payload import contract

from . import TEST_NAME, reffile, variables
from .runs import group, index_attrs, key_text, last
from .text import markdown, num

VARIANTS = [('lrfs', 'LR&FS'), ('hrvs', 'HR&VS')]


class PlotError(Exception):
    pass


def _subkey(key):
    """(partition, model, ...): a key without its variant."""
    return (key[0],) + key[2:]


def _stats(runs, name):
    values = [r.perf[name][0] for r in runs if name in r.perf]
    if not values:
        return None
    return statistics.median(values), min(values), max(values), len(values)


def _unit(runs, name):
    for r in runs:
        if name in r.perf:
            return r.perf[name][1]
    return ''


def summary(runs, last_n=5):
    """[(partition/model, variable, unit, lrfs stats, hrvs stats)], variants side by side."""
    attrs = index_attrs(runs)
    groups = last(group(runs, attrs), last_n)      # key: (partition, variant, model[, scale])
    subkeys = sorted({_subkey(k) for k in groups}, key=lambda k: [str(x) for x in k])
    names = []
    for rs in groups.values():
        for r in rs:
            names += [n for n in r.perf if n not in names]
    order = list(contract.BY_NAME)
    names.sort(key=lambda n: (order.index(n) if n in order else len(order), n))
    rows = []
    for sk in subkeys:
        for name in names:
            per_variant = []
            unit = ''
            for variant, _ in VARIANTS:
                rs = groups.get((sk[0], variant) + sk[1:], [])
                per_variant.append(_stats(rs, name))
                unit = unit or _unit(rs, name)
            if any(per_variant):
                rows.append((key_text(sk), name, unit, *per_variant))
    return rows


def _cell(stats):
    if stats is None:
        return '-'
    m, lo, hi, n = stats
    return f'{num(m)} (n={n})'


def _ratio(a, b):
    if a is None or b is None or a[0] == 0:
        return '-'
    return f'{b[0] / a[0]:.2f}x'


HEADERS = ['partition/model', 'variable', 'unit', 'LR&FS median', 'HR&VS median',
           'HR&VS / LR&FS']


def summary_table(rows):
    return [[k, name, unit, _cell(a), _cell(b), _ratio(a, b)] for k, name, unit, a, b in rows]


def write_tables(rows, out_dir, system):
    os.makedirs(out_dir, exist_ok=True)
    md = os.path.join(out_dir, f'{system}-summary.md')
    with open(md, 'w') as f:
        f.write(f'# size-shape-bench on {system}: LR&FS vs HR&VS\n\n')
        f.write(markdown(HEADERS, summary_table(rows)) + '\n')
    path_csv = os.path.join(out_dir, f'{system}-summary.csv')
    with open(path_csv, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['key', 'variable', 'unit', 'lrfs_median', 'lrfs_min', 'lrfs_max', 'lrfs_runs',
                    'hrvs_median', 'hrvs_min', 'hrvs_max', 'hrvs_runs'])
        for k, name, unit, a, b in rows:
            w.writerow([k, name, unit, *(a or [''] * 4), *(b or [''] * 4)])
    return [md, path_csv]


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise PlotError("plots need matplotlib: pip install 'size-shape-bench[report]' "
                        "(or pass --no-plots for the tables alone)") from None
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    return plt


def _label(name, unit):
    label = contract.BY_NAME[name].title if name in contract.BY_NAME else name
    return f'{label} ({unit})' if unit else label


def plot_variants(rows, path, system):
    """Grouped bars: for each variable, LR&FS and HR&VS of each partition/model."""
    plt = _pyplot()
    by_var = {}
    for k, name, unit, a, b in rows:
        if name in variables.REPORT_VARIABLES:
            by_var.setdefault(name, (unit, []))[1].append((k, a, b))
    names = [n for n in variables.REPORT_VARIABLES if n in by_var]
    if not names:
        raise PlotError('no run has any of ' + ', '.join(variables.REPORT_VARIABLES))
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 4), squeeze=False)
    colours = {'lrfs': '#4477aa', 'hrvs': '#ee6677'}
    for ax, name in zip(axes[0], names):
        unit, entries = by_var[name]
        width = 0.38
        for i, (variant, label) in enumerate(VARIANTS):
            xs, heights, err = [], [], [[], []]
            for j, (k, *stats) in enumerate(entries):
                s = stats[i]
                if s is None:
                    continue
                m, lo, hi, _ = s
                xs.append(j + (i - 0.5) * width)
                heights.append(m)
                err[0].append(m - lo)
                err[1].append(hi - m)
            ax.bar(xs, heights, width, yerr=err, capsize=3, label=label, color=colours[variant])
        for j, (k, a, b) in enumerate(entries):
            if a and b and a[0]:
                ax.annotate(f'{b[0] / a[0]:.2f}x', (j + 0.5 * width, b[0]), ha='center',
                            va='bottom', fontsize=8, xytext=(0, 3), textcoords='offset points')
        ax.set_xticks(range(len(entries)))
        ax.set_xticklabels([k for k, *_ in entries], rotation=20, ha='right', fontsize=8)
        ax.set_title(_label(name, unit), fontsize=10)
        ax.margins(y=0.15)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f'{system}: LR&FS vs HR&VS (median of the latest runs, whiskers min-max)',
                 fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_trend(runs, refs, path, system):
    """One panel per key x variable: every run, oldest to newest, with the reference band."""
    plt = _pyplot()
    groups = group(runs, index_attrs(runs))
    names = [n for n in variables.REPORT_VARIABLES
             if any(n in r.perf for rs in groups.values() for r in rs)]
    if not groups or not names:
        raise PlotError('no runs to plot')
    fig, axes = plt.subplots(len(groups), len(names), figsize=(4.2 * len(names),
                                                                2.8 * len(groups)),
                             squeeze=False)
    for row, (key, rs) in zip(axes, groups.items()):
        ref_key = refs.run_key(rs[-1]) if refs is not None else None
        entries = (refs.entries.get(ref_key) or {}) if refs is not None else {}
        for ax, name in zip(row, names):
            pts = [(i, r.perf[name][0]) for i, r in enumerate(rs) if name in r.perf]
            unit = _unit(rs, name)
            ax.set_title(f'{key_text(key)}\n{_label(name, unit)}', fontsize=8)
            if not pts:
                ax.text(0.5, 0.5, 'not measured', ha='center', va='center',
                        transform=ax.transAxes, fontsize=8)
                continue
            xs, ys = zip(*pts)
            inside = [True] * len(ys)
            if name in entries:
                value, lower, upper, _ = reffile.entry_tuple(entries[name])
                lo, hi = reffile.band(value, lower, upper)
                shown = list(ys) + [value] + [b for b in (lo, hi) if abs(b) != float('inf')]
                pad = (max(shown) - min(shown)) * 0.08 or abs(value) * 0.1 or 1
                ylim = (min(shown) - pad, max(shown) + pad)
                # An unbounded side runs to the edge of the panel.
                ax.axhspan(max(lo, ylim[0]), min(hi, ylim[1]), color='#88cc88', alpha=0.3,
                           label='reference band (passes)')
                ax.axhline(value, color='#228833', ls='--', lw=1, label='reference')
                ax.set_ylim(*ylim)
                inside = [lo <= y <= hi for y in ys]
            ax.plot(xs, ys, '-', color='#777777', lw=1)
            ax.scatter(xs, ys, c=['#4477aa' if ok else '#cc3311' for ok in inside], s=18,
                       zorder=3)
            ax.set_xticks(list(xs))
            ax.set_xticklabels([rs[i].when.strftime('%m-%d %H:%M') for i in xs], rotation=45,
                               ha='right', fontsize=6)
            ax.tick_params(axis='y', labelsize=7)
    handles, labels = [], []
    for ax in axes.flat:
        h, lab = ax.get_legend_handles_labels()
        if h:
            handles, labels = h, lab
            break
    if handles:
        fig.legend(handles, labels, loc='upper right', fontsize=8)
    fig.suptitle(f'{system}: runs over time (red: outside the reference band)', fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


TTA_TEST = 'TimeToAccuracy'
TTA_HEADERS = ['partition/variant/model', 'runs', 'target', 'seconds to target',
               'epochs to target', 'val accuracy per epoch (newest run)']


def _curve(run, name):
    text = run.get(name) or ''
    return [float(x) for x in text.split(',') if x]


def tta_table(runs, last_n=5, tta_aggregate='mlperf'):
    """Rows of the time-to-accuracy table: the newest ``last_n`` runs of each key,
    combined as ``--tta-aggregate`` says (n/a below the 3 runs MLPerf's rule needs)."""
    rows = []
    for key, rs in last(group(runs, index_attrs(runs)), last_n).items():
        cells = []
        for name in ('seconds_to_target', 'epochs_to_target'):
            values = [r.perf[name][0] for r in rs if name in r.perf]
            try:
                cells.append(num(variables.centre(name, values, tta_aggregate)) if values else '-')
            except variables.TooFewRuns:
                cells.append(f'n/a ({len(values)} run(s), MLPerf needs 3)')
        curve = ' '.join(f'{a:.2f}' for a in _curve(rs[-1], 'val_accuracy_curve'))
        rows.append([key_text(key), str(len(rs)), rs[-1].get('target_accuracy') or '-',
                     *cells, curve])
    return rows


def plot_accuracy(runs, path, system):
    """Per partition x model, the newest run of each variant: val accuracy over time."""
    plt = _pyplot()
    newest = {k: rs[-1] for k, rs in group(runs, index_attrs(runs)).items()}
    panels = sorted({_subkey(k) for k in newest}, key=lambda k: [str(x) for x in k])
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.6), squeeze=False)
    colours = {'lrfs': '#4477aa', 'hrvs': '#ee6677'}
    for ax, sk in zip(axes[0], panels):
        for variant, label in VARIANTS:
            run = newest.get((sk[0], variant) + sk[1:])
            if run is None:
                continue
            ax.plot(_curve(run, 'val_time_curve'), _curve(run, 'val_accuracy_curve'), 'o-',
                    color=colours[variant], label=f'{label} ({run.when:%Y-%m-%d %H:%M})')
            if run.get('target_accuracy'):
                ax.axhline(float(run.get('target_accuracy')), color='#777777', ls='--', lw=1)
        ax.set_title(key_text(sk), fontsize=9)
        ax.set_xlabel('seconds since the first touch of the data', fontsize=8)
        ax.set_ylabel('validation accuracy', fontsize=8)
        ax.legend(fontsize=7)
    fig.suptitle(f'{system}: time to accuracy (dashed: the target)', fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_report(runs, refs, out_dir, system, last_n=5, plots=True, tta_aggregate='mlperf'):
    """Write the tables (and plots); returns (the paths written, the summary rows)."""
    training = [r for r in runs if r.test == TEST_NAME]
    tta = [r for r in runs if r.test == TTA_TEST]
    rows = summary(training, last_n)
    written = write_tables(rows, out_dir, system)
    if tta:
        with open(written[0], 'a') as f:
            f.write(f'\n## Time to accuracy ({tta_aggregate} of the newest {last_n} runs)\n\n')
            f.write(markdown(TTA_HEADERS, tta_table(tta, last_n, tta_aggregate)) + '\n')
    if plots:
        if training:
            written.append(plot_variants(rows, os.path.join(out_dir,
                                                            f'{system}-lrfs-vs-hrvs.png'), system))
            written.append(plot_trend(training, refs,
                                      os.path.join(out_dir, f'{system}-trend.png'), system))
        if tta:
            written.append(plot_accuracy(tta, os.path.join(out_dir, f'{system}-accuracy.png'),
                                         system))
    return written, rows
