"""``compare.png``: per variable, grouped bars per side and variant (median), whiskers the
interval of each side's geometric mean, a star over significant differences. Each side
has a colour and a hatch, so that the picture reads in greyscale too."""
from ssb_contract import perf
from ssb_contract.options import VARIANTS, VARIANT_LABELS

from ssb_references.compare.output import GAP
from ssb_references.judge import stats
from ssb_references.report.charts import PlotError, pyplot

PANELS = ['throughput', 'pixel_throughput', 'steady_epoch_time', 'host_peak_memory', GAP]
# Paul Tol's bright scheme (colour-blind safe) and hatches that differ in grey.
COLOURS = ['#4477aa', '#ee6677', '#228833', '#ccbb44', '#66ccee', '#aa3377']
HATCHES = ['', '///', '...', 'xxx', '\\\\\\', 'ooo']


def plot(comparison, path):
    plt = pyplot()
    c = comparison
    names = [n for n in PANELS if any(r.variable == n for r in c.rows)]
    if not names:
        raise PlotError(f'nothing to plot: no compared {", ".join(PANELS)}')
    fig, axes = plt.subplots(1, len(names), figsize=(3.3 * len(names) + 0.6, 4.2),
                             squeeze=False)
    width = 0.8 / len(c.sides)
    for ax, name in zip(axes[0], names):
        rows = [r for r in c.rows if r.variable == name]
        order = {v: i for i, v in enumerate(VARIANTS)}     # LR&FS first
        groups = sorted({(r.model, r.variant, r.scale) for r in rows},
                        key=lambda g: (g[0], order.get(g[1], len(order)), g[2]))
        for i, side in enumerate(c.sides):
            for j, group in enumerate(groups):
                row = next((r for r in rows if r.side == side and
                            (r.model, r.variant, r.scale) == group), None)
                if row is None:
                    continue
                x = j + (i - (len(c.sides) - 1) / 2) * width
                err = None
                if row.centre is not None and row.n >= 3:
                    err = [[max(0, row.median - row.centre.low)],
                           [max(0, row.centre.high - row.median)]]
                ax.bar(x, row.median, width, yerr=err, capsize=3, color=COLOURS[i % 6],
                       hatch=HATCHES[i % 6], edgecolor='black', linewidth=0.6,
                       label=side if j == 0 else None)
                if row.significant == 'yes':
                    top = max(row.median, row.centre.high if row.centre else 0)
                    ax.annotate(f'{row.ratio:.2f}x*', (x, top), ha='center', va='bottom',
                                fontsize=8, fontweight='bold', xytext=(0, 2),
                                textcoords='offset points')
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([f'{m}\n{VARIANT_LABELS.get(v, "gap")}'
                            + ('' if s == 'single' else f' ({s})') for m, v, s in groups],
                           fontsize=8)
        var = perf.BY_NAME[name]
        title = 'HR&VS/LR&FS\ntime per Mpx' if name == GAP else var.title
        ax.set_title(f'{title} ({var.unit}, {var.better} is better)', fontsize=9)
        ax.tick_params(axis='y', labelsize=8)
        ax.margins(y=0.18)
    handles, labels = [], []
    for ax in axes[0]:              # a side may be missing from a panel
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    fig.legend(handles, labels, loc='lower center', ncol=len(c.sides), fontsize=9,
               frameon=False)
    fig.suptitle(f'{" vs ".join(c.sides)}: median of the runs; whiskers '
                 f'{stats.percent(c.confidence)} interval of the (geometric) mean; '
                 f'* ratio to {c.sides[0]} significant', fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
