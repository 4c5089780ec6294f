"""The change points of a history written out: DIR/changes.csv (one row per change) and
DIR/changes.md (a table, then what was left out or set apart and why); judge/changes.py
finds them."""
import csv
import datetime
import os

from ssb_references.runs.run import key_text
from ssb_references.runs.text import markdown, num

CSV_COLUMNS = ['test', 'key', 'variable', 'unit', 'system_partition', 'date', 'session',
               'mean_before', 'mean_after', 'change_pct', 'pvalue', 'runs_before',
               'runs_after']


def csv_row(change):
    p = change.point
    return [change.test, key_text(change.key[1:]), change.variable, change.unit,
            change.key[0], change.date, change.session, f'{p.mean_before:.6g}',
            f'{p.mean_after:.6g}', f'{p.change * 100:.3g}', f'{p.pvalue:.3g}',
            change.runs_before, change.runs_after]


def write(out_dir, found, params):
    """DIR/changes.csv and DIR/changes.md of ``found`` (judge/changes.Found), ``params``
    the method's settings as text; returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    csv_path, md_path = os.path.join(out_dir, 'changes.csv'), os.path.join(out_dir, 'changes.md')
    with open(csv_path, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        w.writerows(csv_row(c) for c in found.changes)
    made = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')
    text = ['# size-shape-bench: change points', '',
            f'{len(found.changes)} change point(s) in {found.judged} series ({made}). {params}',
            '']
    if found.changes:
        text.append(markdown(
            ['variable', 'test', 'key', 'system:partition', 'date', 'session', 'before',
             'after', 'size', 'p-value'],
            [[c.variable, c.test, key_text(c.key[1:]), c.key[0], c.date, c.session or '-',
              f'{num(c.point.mean_before)} {c.unit}', f'{num(c.point.mean_after)} {c.unit}',
              f'{c.point.change * 100:+.1f}%', f'{c.point.pvalue:.2g}'] for c in found.changes]))
    text += ['', f'## Left out or set apart ({len(found.notes)})', '']
    text += [f'- {x}' for x in found.notes] or ['- nothing']
    with open(md_path, 'w') as f:
        f.write('\n'.join(text) + '\n')
    return [csv_path, md_path]
