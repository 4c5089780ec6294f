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

from ssb_contract import perf

from ssb_references.reffile import rule
from ssb_references.report import charts
from ssb_references.runs.run import (TEST_NAME, curve, group, index_attrs, key_text, last, unit_of,
                                     without_variant)
from ssb_references.runs.text import markdown, num

VARIANTS = [('lrfs', 'LR&FS'), ('hrvs', 'HR&VS')]


def _stats(runs, name):
    values = [r.perf[name][0] for r in runs if name in r.perf]
    if not values:
        return None
    return statistics.median(values), min(values), max(values), len(values)


def summary(runs, last_n=5):
    """[(partition/model, variable, unit, lrfs stats, hrvs stats)], variants side by side."""
    attrs = index_attrs(runs)
    groups = last(group(runs, attrs), last_n)      # key: (partition, variant, model[, scale])
    subkeys = sorted({without_variant(k) for k in groups}, key=lambda k: [str(x) for x in k])
    names = []
    for rs in groups.values():
        for r in rs:
            names += [n for n in r.perf if n not in names]
    order = list(perf.BY_NAME)
    names.sort(key=lambda n: (order.index(n) if n in order else len(order), n))
    rows = []
    for sk in subkeys:
        for name in names:
            per_variant = []
            unit = ''
            for variant, _ in VARIANTS:
                rs = groups.get((sk[0], variant) + sk[1:], [])
                per_variant.append(_stats(rs, name))
                unit = unit or unit_of(rs, name)
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


TTA_TEST = 'TimeToAccuracy'
TTA_HEADERS = ['partition/variant/model', 'runs', 'target', 'seconds to target',
               'epochs to target', 'val accuracy per epoch (newest run)']


def tta_table(runs, last_n=5, tta_aggregate='mlperf'):
    """Rows of the time-to-accuracy table: the newest ``last_n`` runs of each key,
    combined as ``--tta-aggregate`` says (n/a below the 3 runs MLPerf's rule needs)."""
    rows = []
    for key, rs in last(group(runs, index_attrs(runs)), last_n).items():
        cells = []
        for name in ('seconds_to_target', 'epochs_to_target'):
            values = [r.perf[name][0] for r in rs if name in r.perf]
            try:
                cells.append(num(rule.centre(name, values, tta_aggregate)) if values else '-')
            except rule.TooFewRuns:
                cells.append(f'n/a ({len(values)} run(s), MLPerf needs 3)')
        accuracies = ' '.join(f'{a:.2f}' for a in curve(rs[-1], 'val_accuracy_curve'))
        rows.append([key_text(key), str(len(rs)), rs[-1].get('target_accuracy') or '-',
                     *cells, accuracies])
    return rows


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
        def out(name):
            return os.path.join(out_dir, f'{system}-{name}.png')
        if training:
            written.append(charts.plot_variants(rows, out('lrfs-vs-hrvs'), system))
            written.append(charts.plot_trend(training, refs, out('trend'), system))
        if tta:
            written.append(charts.plot_accuracy(tta, out('accuracy'), system))
    return written, rows
