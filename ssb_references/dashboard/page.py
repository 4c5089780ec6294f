"""The dashboard's page: one self-contained ``index.html`` (Bokeh's JavaScript inline: no
server, no network), written into a directory checked as ssb-acceptance checks its own."""
import datetime
import os

import jinja2

from ssb_common import atomic, safefiles

from ssb_references import __version__
from ssb_references.judge import drift, stats
from ssb_references.report import report
from ssb_references.runs.text import num

from . import series

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE = 'page.html.jinja'
OPEN_NOTES = 12
INTROS = {
    'TrainingTest': 'Each training run: choose a variable; all test cases side by side, then '
                    'each with its reference band and the history\'s interval.',
    'SizeShapeGap': 'The HR&VS/LR&FS gap of each session (SizeShapeGap): whiskers are the '
                    'session\'s own interval of the ratio.',
    'TimeToAccuracy': 'Time to the target accuracy, MLPerf\'s way.',
}


def _template():
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    return env.get_template(TEMPLATE)


def _failures(all_series):
    rows = [[r.when.strftime('%Y-%m-%d %H:%M'), r.partition, r.get('name') or s.test,
             r.get('result') or '-', r.session or '-', r.get('job_nodelist') or '-',
             r.get('jobid') or '-']
            for s in all_series for r in s.runs if series.failed(r)]
    return {'headers': ['date (UTC)', 'partition', 'test case', 'result', 'session', 'nodes',
                        'job'], 'rows': sorted(rows)} if rows else None


def _changes(all_series):
    rows = [[s.test, s.label, c.variable,
             datetime.datetime.fromtimestamp(c.time, datetime.timezone.utc)
             .strftime('%Y-%m-%d %H:%M'), c.session, num(c.before), num(c.after),
             f'{c.size * 100:+.1f}%', f'{c.p:.2g}']
            for s in all_series for c in s.changes]
    return {'headers': ['test', 'test case', 'variable', 'from (UTC)', 'session', 'before',
                        'after', 'change', 'p'], 'rows': rows} if rows else None


def _side_by_side(runs, last_n):
    training = [r for r in runs if r.test == 'TrainingTest' and r.perf]
    if not training:
        return None
    return {'headers': report.HEADERS,
            'rows': report.summary_table(report.summary(training, last_n))}


def render(all_series, runs, *, sources, confidence=stats.DEFAULT_CONFIDENCE,
           history=drift.DEFAULT_HISTORY, last_n=5):
    """The page's HTML."""
    from bokeh.embed import file_html
    from bokeh.resources import INLINE

    from . import figures          # Bokeh: imported by the commands that draw only
    tests = list(dict.fromkeys(s.test for s in all_series))
    roots = [figures.section(t, [s for s in all_series if s.test == t]) for t in tests]
    sections = [{'title': t, 'intro': INTROS.get(t, ''),
                 'notes': [(s.label, s.notes) for s in all_series if s.test == t and s.notes]}
                for t in tests]
    for section in sections:          # a few notes are read, many are opened when wanted
        section['open'] = sum(len(lines) for _, lines in section['notes']) <= OPEN_NOTES
    systems = sorted({r.system for r in runs})
    times = sorted(r.when for r in runs)
    context = {
        'title': f'size-shape-bench history: {", ".join(systems)}',
        'generated': f'{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC',
        'version': __version__, 'sources': sources, 'runs': len(runs), 'systems': systems,
        'first': f'{times[0]:%Y-%m-%d}', 'last': f'{times[-1]:%Y-%m-%d}',
        'rule': f'{stats.percent(confidence)} prediction interval of at most {history} '
                f'earlier runs of the same workload and payload series, at least '
                f'{drift.MIN_HISTORY}, and beyond the variable\'s practical floor',
        'verdicts': list(zip(series.VERDICTS, figures.COLOURS)),
        'sections': sections,
        'side_by_side': _side_by_side(runs, last_n),
        'last_n': last_n, 'changes': _changes(all_series),
        'no_changes': 'No change points found (ssb-references changes: docs/references.md).',
        'failures': _failures(all_series)}
    return file_html(roots, INLINE, title=context['title'], template=_template(),
                     template_variables=context)


def write(html, out):
    """Write ``out/index.html``: ``out`` must be a directory of its own (not a link, not
    writable by everyone without the sticky bit) that this user may write in."""
    try:
        safefiles.own_dir(out)
    except PermissionError as err:
        raise PermissionError(f'cannot make {out}: {err.strerror}') from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise PermissionError(f'{out} is not writable by this user')
    path = os.path.join(out, 'index.html')
    with atomic.file(path, suffix='.html', overwrite=True) as tmp, open(tmp, 'w') as f:
        f.write(html)
    return path

