"""The dashboard's size and speed on a year of nightly history from 4 partitions
(year_history.py), each against a baseline in the same run, alternated and repeated:

- build: ``ssb-references dashboard`` against ``ssb-references report`` (the PNG report of the
  same runs), wall seconds of the whole command;
- load: the page in headless Chromium until every plot is drawn, against a Bokeh page of one
  figure of 365 points (what BokehJS costs by itself);
- size: the page, and the part of it that is Bokeh's inline JavaScript.

    python benchmarks/dashboard.py [--seed-dir PERFLOGS] [--repeats 5] [--screenshot PNG]

Targets (issue "A page to look at"): build under 10 s, under 5 MB, drawn in under 3 s.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks import browser, year_history  # noqa: E402

MB = 1024 * 1024
TARGETS = {'build_s': 10.0, 'size_mb': 5.0, 'load_s': 3.0}


def command(*args, cwd):
    start = time.monotonic()
    proc = subprocess.run([sys.executable, '-m', 'ssb_references', *map(str, args)], cwd=cwd,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f'{args[0]} failed: {proc.stderr}')
    return time.monotonic() - start


def bokeh_floor(path):
    """A page of one Bokeh figure with 365 points, inline: the baseline of a load."""
    import numpy as np
    from bokeh.embed import file_html
    from bokeh.plotting import figure
    from bokeh.resources import INLINE
    fig = figure(x_axis_type='datetime', width=1140, height=320)
    fig.scatter(np.arange(365) * 86400e3, np.random.default_rng(0).normal(size=365))
    with open(path, 'w') as f:
        f.write(file_html(fig, INLINE, 'one figure'))


def script_bytes(page):
    """(bytes of the page's inline JavaScript: Bokeh's bundles and the page's own script,
    bytes of its data: the JSON document)."""
    text = open(page).read()
    scripts = re.findall(r'<script\b([^>]*)>(.*?)</script>', text, flags=re.DOTALL)
    data = sum(len(body) for attrs, body in scripts if 'application/json' in attrs)
    return sum(len(body) for _, body in scripts) - data, data


def row(name, values, unit, target=None):
    med = statistics.median(values)
    verdict = '' if target is None else (' met' if med < target else ' **missed**')
    return (f'| {name} | {med:.2f} {unit} | {min(values):.2f} .. {max(values):.2f} | '
            f'{len(values)} |{verdict}')


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--seed-dir', metavar='DIR', help='perflogs of a real run (default: run '
                   'year_history.SEED_COMMAND first, about a minute)')
    p.add_argument('--repeats', type=int, default=5)
    p.add_argument('--screenshot', metavar='PNG', help='write a screenshot of the page top')
    args = p.parse_args(argv)
    work = tempfile.mkdtemp(prefix='ssb-dashboard-bench-')
    seed_dir = args.seed_dir or year_history.run_seed(work)
    year_history.write_year(year_history.seed_records(seed_dir), os.path.join(work, 'perflogs'))
    # References proposed from January's nights, as a site would after its first month.
    command('update', '--perflog-dir', 'perflogs', '--reference-dir', 'refs', '--until',
            '2026-01-31', cwd=work)
    print(f'load average before: {os.getloadavg()[0]:.2f}')
    build, report = [], []
    for _ in range(args.repeats):                # alternated: the same noise for both
        build.append(command('dashboard', '--perflog-dir', 'perflogs', '--reference-dir',
                             'refs', '--out', 'page', cwd=work))
        report.append(command('report', '--perflog-dir', 'perflogs', '--reference-dir',
                              'refs', '--out', 'report', cwd=work))
    page = os.path.join(work, 'page', 'index.html')
    floor_page = os.path.join(work, 'floor.html')
    bokeh_floor(floor_page)
    loads, floors = [], []
    with browser.Chromium(height=1400) as chromium:
        for _ in range(args.repeats):
            load = chromium.load(page)
            if load.errors:
                sys.exit(f'console errors: {load.errors}')
            loads.append(load.seconds)
            floors.append(chromium.load(floor_page).seconds)
        if args.screenshot:
            chromium.load(page, screenshot=args.screenshot)
    size = os.path.getsize(page) / MB
    print(f'load average after: {os.getloadavg()[0]:.2f}\n')
    print('| measure | median | min .. max | n |\n|---|---|---|---|')
    print(row('dashboard build (4 partitions x 365 nights)', build, 's', TARGETS['build_s']))
    print(row('`ssb-references report` of the same runs', report, 's'))
    print(row('dashboard drawn in headless Chromium', loads, 's', TARGETS['load_s']))
    print(row('one Bokeh figure of 365 points, drawn', floors, 's'))
    print(f'\nbuild / report: {statistics.median(b / r for b, r in zip(build, report)):.2f}; '
          f'load / one figure: {statistics.median(a / b for a, b in zip(loads, floors)):.2f}')
    code, data = script_bytes(page)
    print(f'page: {size:.2f} MB (target < {TARGETS["size_mb"]:g}): JavaScript {code / MB:.2f} '
          f'MB, the runs\' data {data / MB:.2f} MB')


if __name__ == '__main__':
    main()
