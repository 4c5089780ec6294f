"""The Bokeh part of the dashboard: for each test, a variable chooser, every test case side by
side, and one figure per test case with its reference band, the history's interval, each
run's verdict, failed runs and change points (series.py computes them; switch.js shows the
chosen variable in the browser).

Every name on the page comes from files in shared directories: Bokeh draws titles, axis
labels and legends on a canvas and fills tooltips and the chooser as text, never as HTML.
"""
import math
import os

import numpy as np
from bokeh.models import (ColumnDataSource, CustomJS, CustomJSHover, DataRange1d,
                          DatetimeAxis, DatetimeTickFormatter, DatetimeTicker, Grid, HoverTool,
                          Legend, LegendItem, LinearColorMapper, Select, Span)
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

from ssb_contract import perf

from ssb_references.reffile import rule

from .series import NOT_JUDGED, VERDICTS, failed

#: Colours of the verdicts, in series.VERDICTS' order (Paul Tol's bright scheme).
COLOURS = ('#999999', '#4477aa', '#cc3311', '#228833', '#ee7733', '#000000', '#77aadd')
TOOLS = 'xpan,xwheel_zoom,box_zoom,reset'
META = ('session', 'payload', 'revision', 'nodes')
with open(os.path.join(os.path.dirname(__file__), 'switch.js')) as _f:
    SWITCH_JS = _f.read()


def label(name, unit):
    pol = perf.BY_NAME.get(name)
    text = pol.title if pol else name
    return f'{text} ({unit})' if unit else text


def whisker_bounds(names):
    """Variables that are the bounds of another's interval (name_low, name_high): drawn as
    its whiskers, not offered on their own."""
    return {n for n in names for side in ('_low', '_high')
            if n.endswith(side) and n[:-len(side)] in names}


def default_variable(names):
    return next((n for n in rule.REPORT_VARIABLES + ['hrvs_lrfs_time_per_mpx']
                 if n in names), names[0])


def _meta(run):
    """What a point's tooltip says of its run besides its date (a perflog has no session:
    the job id stands for it)."""
    return {'session': run.session or f'job {run.get("jobid") or "-"}',
            'payload': run.payload_version or '-',
            'revision': (run.get('git_revision') or '-')[:12],
            'nodes': run.get('job_nodelist') or '-'}


def _band(series, name):
    """[low, high, reference] of the reference band, unbounded sides cut at the edge of the
    values (as report's trend plot does), or None."""
    if name not in series.references:
        return None
    value, low, high = series.references[name]
    shown = [v for v in series.values[name] if not math.isnan(v)] + [value]
    pad = (max(shown) - min(shown)) * 0.08 or abs(value) * 0.1 or 1.0
    return [max(low, min(shown) - pad), min(high, max(shown) + pad), value]


def _source(series, shown):
    """The runs' columns: x, their metadata, each variable's values ('v:'), verdicts ('s:')
    and history interval ('l:', 'h:'), and the working columns of the ``shown`` variable.
    Float32 and int8 where the tooltips' 4 digits allow: a smaller, faster page."""
    runs = series.runs
    data = {'x': np.array([r.time * 1000.0 for r in runs])}
    metas = [_meta(r) for r in runs]
    for name in META:
        data[name] = [m[name] for m in metas]
    for name, values in series.values.items():
        data[f'v:{name}'] = np.array(values, dtype=np.float32)
        data[f's:{name}'] = np.array(series.verdicts[name], dtype=np.int8)
        if name in series.intervals:
            low, high = series.intervals[name]
            data[f'l:{name}'] = np.array(low, dtype=np.float32)
            data[f'h:{name}'] = np.array(high, dtype=np.float32)
    data.update(_working(data, shown, len(runs)))
    return ColumnDataSource(data)


def _working(data, name, n):
    """The working columns for variable ``name``: what switch.js sets in the browser."""
    nan = np.full(n, np.nan, dtype=np.float32)      # a variable this case did not log
    return {'y': data.get(f'v:{name}', nan),
            'code': data.get(f's:{name}', np.full(n, NOT_JUDGED, dtype=np.int8)),
            'lo': data.get(f'l:{name}', nan), 'hi': data.get(f'h:{name}', nan),
            'wl': data.get(f'v:{name}_low', nan), 'wh': data.get(f'v:{name}_high', nan)}


def _reference_source(series, name):
    band = _band(series, name) or [math.nan] * 3
    x = [series.runs[0].time * 1000.0, series.runs[-1].time * 1000.0]
    return ColumnDataSource({'x': x, 'lo': [band[0]] * 2, 'hi': [band[1]] * 2,
                             'ref': [band[2]] * 2})


def _changes(series):
    return [{'variable': c.variable, 'x': c.time * 1000.0, 'before': c.before,
             'after': c.after, 'percent': c.size * 100, 'p': c.p, 'session': c.session}
            for c in series.changes]


CHANGE_COLUMNS = ('x', 'before', 'after', 'percent', 'p', 'session')


def _change_source(changes, name):
    shown = [c for c in changes if c['variable'] == name]
    return ColumnDataSource({k: [c[k] for c in shown] for k in CHANGE_COLUMNS})


HOVER = [('', '@x{%Y-%m-%d %H:%M} UTC'), ('value', '@y{%0.4g}'), ('verdict', '@code{v}'),
         ('history', '@lo{%0.4g} to @hi{%0.4g}'), ('session', '@session'),
         ('payload', '@payload'), ('git', '@revision'), ('nodes', '@nodes')]
CHANGE_HOVER = [('change point', '@session'), ('before', '@before{%0.4g}'),
                ('after', '@after{%0.4g}'), ('change', '@percent{%+0.1f}%'),
                ('p', '@p{%0.2g}')]


# New models for each page: a Bokeh model belongs to one document.
def verdict_colour():
    """A point's colour from its verdict's code."""
    return {'field': 'code', 'transform': LinearColorMapper(
        palette=list(COLOURS), low=-0.5, high=len(COLOURS) - 0.5)}


def formatters():
    """The tooltips' formats; a verdict's name from its code."""
    return {'@x': 'datetime', '@y': 'printf', '@lo': 'printf', '@hi': 'printf',
            '@code': CustomJSHover(code='return verdicts[value]',
                                   args={'verdicts': list(VERDICTS)})}


def _frame(title, height, width, x_range, x_axis):
    """A figure with a shared time axis (one ticker and formatter per section: fewer models,
    a faster page)."""
    fig = figure(title=title, height=height, width=width, x_axis_type=None, x_range=x_range,
                 y_range=DataRange1d(), tools=TOOLS, toolbar_location='above')
    fig.toolbar.logo = None
    ticker, formatter = x_axis
    fig.add_layout(DatetimeAxis(ticker=ticker, formatter=formatter), 'below')
    fig.add_layout(Grid(dimension=0, ticker=ticker))
    return fig


def _case_figure(series, src, x_range, x_axis, name, unit):
    """The series' own figure; its part of switch.js's arguments."""
    fig = _frame(series.label, 250, 560, x_range, x_axis)
    ranged, reference, cps, changes = [], None, None, _changes(series)
    if series.references:
        reference = _reference_source(series, name)
        ranged += [fig.varea('x', 'lo', 'hi', source=reference, fill_color='#88cc88',
                             fill_alpha=0.3),
                   fig.line('x', 'ref', source=reference, color='#228833', line_dash='dashed')]
    if series.intervals:
        ranged.append(fig.varea('x', 'lo', 'hi', source=src, fill_color='#4477aa',
                                fill_alpha=0.15))
    if whisker_bounds(series.values):
        fig.segment('x', 'wl', 'x', 'wh', source=src, color='#bbbbbb', line_alpha=0.5)
    fig.line('x', 'y', source=src, color='#aaaaaa', line_width=1)
    dots = fig.scatter('x', 'y', source=src, size=5, color=verdict_colour())
    fig.add_tools(HoverTool(renderers=[dots], tooltips=HOVER, formatters=formatters()))
    ranged.append(dots)
    if changes:
        cps = _change_source(changes, name)
        fig.segment('x', 'before', 'x', 'after', source=cps, color='#ee7733', line_width=3)
        marks = fig.scatter('x', 'after', source=cps, marker='triangle', size=11,
                            color='#ee7733')
        fig.add_tools(HoverTool(renderers=[marks], tooltips=CHANGE_HOVER, formatters={
            '@before': 'printf', '@after': 'printf', '@percent': 'printf', '@p': 'printf'}))
        ranged.append(marks)
    # The y range follows the values and the bands, not the whiskers of a wide interval.
    fig.y_range.renderers = ranged
    for run in series.runs:          # failed before it measured anything: a line
        if failed(run) and not run.perf:
            fig.add_layout(Span(location=run.time * 1000.0, dimension='height',
                                line_color='#000000', line_dash='dotted'))
    fig.yaxis.axis_label = label(name, unit)
    return fig, {'source': src, 'reference': reference, 'changes': cps, 'axis': fig.yaxis[0],
                 'bands': {n: _band(series, n) for n in series.values}, 'points': changes}


def section(test, series_list):
    """A Bokeh layout for the test's series: the chooser, all side by side, one each."""
    from bokeh.layouts import column, gridplot
    names = []
    for s in series_list:
        names += [n for n in s.values if n not in names]
    names = [n for n in names if n not in whisker_bounds(names)]
    units = {n: u for s in series_list for n, u in s.units.items()}
    shown = default_variable(names)
    x_range, x_axis = DataRange1d(), (DatetimeTicker(), DatetimeTickFormatter())
    side = _frame(f'{test}: every test case side by side', 320, 1140, x_range, x_axis)
    items, lines, cases, panels = [], [], [], []
    for i, s in enumerate(series_list):
        src = _source(s, shown)
        lines.append(side.line('x', 'y', source=src, color=Category10_10[i % 10],
                               name=s.label))
        items.append(LegendItem(label=s.label, renderers=[lines[-1]]))
        fig, case = _case_figure(s, src, x_range, x_axis, shown, units[shown])
        panels.append(fig)
        cases.append(case)
    side.add_tools(HoverTool(renderers=lines, tooltips=[('', '$name')] + HOVER,
                             formatters=formatters(), line_policy='nearest'))
    side.add_layout(Legend(items=items, click_policy='hide', label_text_font_size='8pt'),
                    'right')
    side.yaxis.axis_label = label(shown, units[shown])
    choose = Select(title='variable', value=shown, width=420,
                    options=[(n, label(n, units[n])) for n in names])
    choose.js_on_change('value', CustomJS(code=SWITCH_JS, args={
        'select': choose, 'cases': cases, 'side_axis': side.yaxis[0],
        'labels': {n: label(n, units[n]) for n in names}}))
    grid = gridplot(panels, ncols=2, merge_tools=False, toolbar_options={'logo': None})
    return column(choose, side, grid, name=f'section-{test}')
