"""The dashboard's size and speed on a year of nightly history from 4 partitions
(year_history.py), each against a baseline in the same run, alternated and repeated:

- build: ``ssb-references dashboard`` against ``ssb-references report`` (the PNG report of the
  same runs), wall and CPU seconds of the whole command;
- load: the page in headless Chromium until every plot is drawn, against a Bokeh page of one
  figure of 365 points (what BokehJS costs by itself), wall seconds from navigation and CPU
  seconds of the renderers;
- size: the page, and the part of it that is Bokeh's inline JavaScript.

    python benchmarks/dashboard.py [--seed-dir PERFLOGS] [--repeats 5] [--screenshot PNG]

Targets (issue "A page to look at"): build under 10 s, under 5 MB, drawn in under 3 s. On a
shared machine other jobs stretch the wall times: the CPU times are what a machine of its
own would wait.
"""
import argparse
import os
import re
import resource
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
    """(wall seconds, CPU seconds) of ``ssb-references ARGS``."""
    start, cpu = time.monotonic(), _children_cpu()
    proc = subprocess.run([sys.executable, '-m', 'ssb_references', *map(str, args)], cwd=cwd,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f'{args[0]} failed: {proc.stderr}')
    return time.monotonic() - start, _children_cpu() - cpu


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


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


def row(name, measured, target=None):
    """A table row of (wall, CPU) seconds: medians, the wall time's range, the verdict."""
    wall, cpu = (statistics.median(m[i] for m in measured) for i in (0, 1))
    verdict = '' if target is None else (' met' if wall < target else
                                         ' met in CPU time' if cpu < target else ' **missed**')
    return (f'| {name} | {wall:.2f} s | {min(m[0] for m in measured):.2f} .. '
            f'{max(m[0] for m in measured):.2f} | {cpu:.2f} s | {len(measured)} |{verdict}')


def ratio(a, b):
    return statistics.median(x[0] / y[0] for x, y in zip(a, b))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--seed-dir', metavar='DIR', help='perflogs of a real run (default: run '
                   'year_history.SEED_COMMAND first, about a minute)')
    p.add_argument('--repeats', type=int, default=5)
    p.add_argument('--screenshot', metavar='PNG', help='write a screenshot of the page top')
    args = p.parse_args(argv)
    work = tempfile.mkdtemp(prefix='ssb-dashboard-bench-')
    if not args.seed_dir:                        # its own directory: the year is written
        os.mkdir(os.path.join(work, 'seed'))     # to work/perflogs, of another system
    seed_dir = args.seed_dir or year_history.run_seed(os.path.join(work, 'seed'))
    year_history.write_year(year_history.seed_records(seed_dir), os.path.join(work, 'perflogs'))
    # References proposed from January's nights, as a site would after its first month.
    command('update', '--perflog-dir', 'perflogs', '--reference-dir', 'refs', '--until',
            '2025-01-31', cwd=work)
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
            loads.append((load.seconds, load.cpu))
            floor = chromium.load(floor_page)
            floors.append((floor.seconds, floor.cpu))
    if args.screenshot:                          # the top of the page, the gpu row included
        with browser.Chromium(height=1750) as chromium:
            chromium.load(page, screenshot=args.screenshot)
        from PIL import Image                    # 128 colours: a third of the bytes
        Image.open(args.screenshot).quantize(colors=128).save(args.screenshot, optimize=True)
    size = os.path.getsize(page) / MB
    print(f'load average after: {os.getloadavg()[0]:.2f}\n')
    print('| measure | wall, median | wall, min .. max | CPU, median | n |\n|---|---|---|---|---|')
    print(row('dashboard build (4 partitions x 365 nights)', build, TARGETS['build_s']))
    print(row('`ssb-references report` of the same runs', report))
    print(row('dashboard drawn in headless Chromium', loads, TARGETS['load_s']))
    print(row('one Bokeh figure of 365 points, drawn', floors))
    print(f'\nbuild / report: {ratio(build, report):.2f}; load / one figure: '
          f'{ratio(loads, floors):.2f} (wall time, median of the pairs)')
    code, data = script_bytes(page)
    print(f'page: {size:.2f} MB (target < {TARGETS["size_mb"]:g}): JavaScript {code / MB:.2f} '
          f'MB, the runs\' data {data / MB:.2f} MB')


if __name__ == '__main__':
    main()
