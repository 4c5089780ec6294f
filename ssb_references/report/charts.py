"""The PNG plots of ``ssb-references report`` (report.py writes the tables): LR&FS next to
HR&VS, every run over time against its reference band, and time to accuracy.

Plots need matplotlib (``pip install 'size-shape-bench[report]'``).
"""
from ssb_contract import perf

from ssb_references.reffile import reffile, rule
from ssb_references.runs.run import curve, group, index_attrs, key_text, unit_of, without_variant

VARIANTS = [('lrfs', 'LR&FS'), ('hrvs', 'HR&VS')]
COLOURS = {'lrfs': '#4477aa', 'hrvs': '#ee6677'}


class PlotError(Exception):
    pass


def pyplot():
    try:
        import matplotlib
    except ImportError:
        raise PlotError("plots need matplotlib: pip install 'size-shape-bench[report]' "
                        "(or pass --no-plots for the tables alone)") from None
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    return plt


def _label(name, unit):
    label = perf.BY_NAME[name].title if name in perf.BY_NAME else name
    return f'{label} ({unit})' if unit else label


def plot_variants(rows, path, system):
    """Grouped bars: for each variable, LR&FS and HR&VS of each partition/model."""
    plt = pyplot()
    by_var = {}
    for k, name, unit, a, b in rows:
        if name in rule.REPORT_VARIABLES:
            by_var.setdefault(name, (unit, []))[1].append((k, a, b))
    names = [n for n in rule.REPORT_VARIABLES if n in by_var]
    if not names:
        raise PlotError('no run has any of ' + ', '.join(rule.REPORT_VARIABLES))
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 4), squeeze=False)
    for ax, name in zip(axes[0], names):
        unit, entries = by_var[name]
        width = 0.38
        for i, (variant, label) in enumerate(VARIANTS):
            xs, heights, err = [], [], [[], []]
            for j, (_, *stats) in enumerate(entries):
                s = stats[i]
                if s is None:
                    continue
                m, lo, hi, _ = s
                xs.append(j + (i - 0.5) * width)
                heights.append(m)
                err[0].append(m - lo)
                err[1].append(hi - m)
            ax.bar(xs, heights, width, yerr=err, capsize=3, label=label, color=COLOURS[variant])
        for j, (_, a, b) in enumerate(entries):
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
    plt = pyplot()
    groups = group(runs, index_attrs(runs))
    names = [n for n in rule.REPORT_VARIABLES
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
            unit = unit_of(rs, name)
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


def plot_accuracy(runs, path, system):
    """Per partition x model, the newest run of each variant: val accuracy over time."""
    plt = pyplot()
    newest = {k: rs[-1] for k, rs in group(runs, index_attrs(runs)).items()}
    panels = sorted({without_variant(k) for k in newest}, key=lambda k: [str(x) for x in k])
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.6), squeeze=False)
    for ax, sk in zip(axes[0], panels):
        for variant, label in VARIANTS:
            run = newest.get((sk[0], variant) + sk[1:])
            if run is None:
                continue
            ax.plot(curve(run, 'val_time_curve'), curve(run, 'val_accuracy_curve'), 'o-',
                    color=COLOURS[variant], label=f'{label} ({run.when:%Y-%m-%d %H:%M})')
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
