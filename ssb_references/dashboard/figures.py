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
from bokeh.models import (ColumnDataSource, CustomJS, DataRange1d, HoverTool, Legend,
                          LegendItem, Select, Span)
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

from payload import contract

from .. import variables
from .series import VERDICTS, failed

#: Colours of the verdicts, in series.VERDICTS' order (Paul Tol's bright scheme).
COLOURS = ('#999999', '#4477aa', '#cc3311', '#228833', '#ee7733', '#000000')
TOOLS = 'xpan,xwheel_zoom,box_zoom,reset'
META = ('date', 'session', 'payload', 'revision', 'nodes', 'job', 'result')
with open(os.path.join(os.path.dirname(__file__), 'switch.js')) as _f:
    SWITCH_JS = _f.read()


def label(name, unit):
    pol = contract.BY_NAME.get(name)
    text = pol.title if pol else name
    return f'{text} ({unit})' if unit else text


def whisker_bounds(names):
    """Variables that are the bounds of another's interval (name_low, name_high): drawn as
    its whiskers, not offered on their own."""
    return {n for n in names for side in ('_low', '_high')
            if n.endswith(side) and n[:-len(side)] in names}


def default_variable(names):
    return next((n for n in variables.REPORT_VARIABLES + ['hrvs_lrfs_time_per_mpx']
                 if n in names), names[0])


def _meta(run):
    return {'date': run.when.strftime('%Y-%m-%d %H:%M UTC'),
            'session': run.session or run.get('session_uuid') or '-',
            'payload': run.payload_version or '-',
            'revision': (run.get('git_revision') or '-')[:12],
            'nodes': run.get('job_nodelist') or '-',
            'job': run.get('jobid') or '-',
            'result': run.get('result') or '-'}


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
    """The runs' columns: x, their metadata, each variable's values ('v:'), history interval
    ('l:', 'h:') and verdicts ('s:'), and the working columns of the ``shown`` variable."""
    runs = series.runs
    data = {'x': np.array([r.time * 1000.0 for r in runs])}
    metas = [_meta(r) for r in runs]
    for name in META:
        data[name] = [m[name] for m in metas]
    for name, values in series.values.items():
        data[f'v:{name}'] = np.array(values)
        if name in series.intervals:
            low, high = series.intervals[name]
            data[f'l:{name}'] = np.array(low, dtype=np.float32)
            data[f'h:{name}'] = np.array(high, dtype=np.float32)
            data[f's:{name}'] = np.array(series.verdicts[name], dtype=np.int8)
    data.update(_working(data, shown, len(runs)))
    return ColumnDataSource(data)


def _working(data, name, n):
    """The working columns for variable ``name``: what switch.js computes in the browser."""
    nan = np.full(n, np.nan)
    codes = data.get(f's:{name}', np.zeros(n, dtype=np.int8))
    return {'y': data.get(f'v:{name}', nan), 'lo': data.get(f'l:{name}', nan),
            'hi': data.get(f'h:{name}', nan), 'wl': data.get(f'v:{name}_low', nan),
            'wh': data.get(f'v:{name}_high', nan),
            'verdict': [VERDICTS[c] for c in codes], 'colour': [COLOURS[c] for c in codes]}


def _reference_source(series, name):
    band = _band(series, name) or [math.nan] * 3
    x = [series.runs[0].time * 1000.0, series.runs[-1].time * 1000.0]
    return ColumnDataSource({'x': x, 'lo': [band[0]] * 2, 'hi': [band[1]] * 2,
                             'ref': [band[2]] * 2})


def _changes(series):
    return [{'variable': c.variable, 'x': c.time * 1000.0, 'before': c.before,
             'after': c.after, 'size': c.size, 'p': c.p, 'session': c.session}
            for c in series.changes]


def _change_source(changes, name):
    shown = [c for c in changes if c['variable'] == name]
    return ColumnDataSource({k: [c[k] for c in shown]
                             for k in ('x', 'before', 'after', 'size', 'p', 'session')})


HOVER = [('', '@date'), ('value', '@y{%0.4g}'), ('verdict', '@verdict'),
         ('history', '@lo{%0.4g} to @hi{%0.4g}'), ('session', '@session'),
         ('payload', '@payload'), ('git', '@revision'), ('nodes', '@nodes'), ('job', '@job'),
         ('result', '@result')]
PRINTF = {'@y': 'printf', '@lo': 'printf', '@hi': 'printf'}


def _case_figure(series, src, x_range, name, unit):
    # The y range follows the values and the bands, not the whiskers of a wide interval.
    y_range = DataRange1d()
    fig = figure(title=series.label, height=250, width=560, x_axis_type='datetime',
                 x_range=x_range, y_range=y_range, tools=TOOLS, toolbar_location='above',
                 name='case')
    fig.toolbar.logo = None
    ref = _reference_source(series, name)
    bands = [fig.varea('x', 'lo', 'hi', source=ref, fill_color='#88cc88', fill_alpha=0.3),
             fig.line('x', 'ref', source=ref, color='#228833', line_dash='dashed'),
             fig.varea('x', 'lo', 'hi', source=src, fill_color='#4477aa', fill_alpha=0.15)]
    fig.segment('x', 'wl', 'x', 'wh', source=src, color='#bbbbbb')
    fig.line('x', 'y', source=src, color='#aaaaaa', line_width=1)
    dots = fig.scatter('x', 'y', source=src, color='colour', size=5)
    fig.add_tools(HoverTool(renderers=[dots], tooltips=HOVER, formatters=PRINTF))
    changes = _changes(series)
    cps = _change_source(changes, name)
    fig.segment('x', 'before', 'x', 'after', source=cps, color='#ee7733', line_width=3)
    marks = fig.scatter('x', 'after', source=cps, marker='triangle', size=11,
                        color='#ee7733')
    y_range.renderers = bands + [dots, marks]
    fig.add_tools(HoverTool(renderers=[marks], tooltips=[
        ('change point', '@session'), ('before', '@before{%0.4g}'),
        ('after', '@after{%0.4g}'), ('change', '@size{%+0.1f}'), ('p', '@p{%0.2g}')],
        formatters={'@before': 'printf', '@after': 'printf', '@size': 'printf',
                    '@p': 'printf'}))
    for run in series.runs:          # failed before it measured anything: a line
        if failed(run) and not run.perf:
            fig.add_layout(Span(location=run.time * 1000.0, dimension='height',
                                line_color='#000000', line_dash='dotted'))
    fig.yaxis.axis_label = label(name, unit)
    return fig, {'source': src, 'reference': ref, 'changes': cps, 'axis': fig.yaxis[0],
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
    x_range = DataRange1d()
    side = figure(title=f'{test}: every test case side by side', height=320, width=1140,
                  x_axis_type='datetime', x_range=x_range, y_range=DataRange1d(), tools=TOOLS,
                  toolbar_location='above', name='side')
    side.toolbar.logo = None
    items, cases, panels = [], [], []
    for i, s in enumerate(series_list):
        src = _source(s, shown)
        colour = Category10_10[i % 10]
        line = side.line('x', 'y', source=src, color=colour)
        dots = side.scatter('x', 'y', source=src, color=colour, size=3)
        side.add_tools(HoverTool(renderers=[dots], tooltips=[('', s.label)] + HOVER,
                                 formatters=PRINTF))
        items.append(LegendItem(label=s.label, renderers=[line, dots]))
        fig, case = _case_figure(s, src, x_range, shown, units[shown])
        panels.append(fig)
        cases.append(case)
    legend = Legend(items=items, click_policy='hide', label_text_font_size='8pt')
    side.add_layout(legend, 'right')
    side.yaxis.axis_label = label(shown, units[shown])
    choose = Select(title='variable', value=shown, width=420,
                    options=[(n, label(n, units[n])) for n in names])
    choose.js_on_change('value', CustomJS(code=SWITCH_JS, args={
        'select': choose, 'cases': cases, 'side_axis': side.yaxis[0],
        'labels': {n: label(n, units[n]) for n in names}, 'verdicts': list(VERDICTS),
        'colours': list(COLOURS)}))
    grid = gridplot(panels, ncols=2, merge_tools=False, toolbar_options={'logo': None})
    return column(choose, side, grid, name=f'section-{test}')
