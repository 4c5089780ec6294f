"""The dashboard in a real browser: Debian's headless Chromium loads the page a year of
nightly history on 4 partitions makes (benchmarks/year_history.py, from the README run's
real records), and the DOM, the console, the requests and the dialogs say what a person would
see. Skipped without Chromium, unless $SSB_REQUIRE_CHROMIUM is set (CI: .ci/run)."""
import json
import os
import resource
import subprocess
import sys
import time

import pytest

from benchmarks import browser, year_history
from ssb_references.runs import perflog
from ssb_references.dashboard import page, series

if not os.access(browser.CHROMIUM, os.X_OK):
    if os.environ.get('SSB_REQUIRE_CHROMIUM'):
        raise RuntimeError(f'no {browser.CHROMIUM}: .ci/install-chromium installs it')
    pytest.skip(f'no {browser.CHROMIUM} (apt-get install chromium)', allow_module_level=True)

MB = 1024 * 1024
HOSTILE = {'partition': '<img src=x onerror=alert(1)>', 'system': '"><svg onload=alert(2)>',
           'variable': "</script><script>alert(3)</script>'\"&amp;"}
# In the page: the model's data, once the chooser's callback has run.
SHOWN = '''(() => {
  const models = [...Bokeh.documents[0].all_models]
  const sources = models.filter((m) => m.data !== undefined && m.data.code !== undefined
                                       && m.data['v:' + NAME] !== undefined)
  return sources.length > 0
         && sources.every((s) => s.data.y.every((y, i) => Object.is(y, s.data['v:' + NAME][i])))
})()'''


def choose(chromium, load, name, timeout=10):
    """Choose the variable ``name`` in the chooser that offers it, as a click would."""
    js = json.dumps(name)
    chromium.evaluate(load.session, f'''(() => {{
      const models = [...Bokeh.documents[0].all_models]
      models.find((m) => m.constructor.__name__ === 'Select'
                         && m.options.some(([value]) => value === {js})).value = {js}
    }})()''')
    deadline = time.monotonic() + timeout
    while not chromium.evaluate(load.session, SHOWN.replace('NAME', js)):
        assert time.monotonic() < deadline, f'{name} not shown after {timeout} s'
        time.sleep(0.05)


@pytest.fixture(scope='module')
def seeds(default_run):
    cwd, _ = default_run
    return year_history.seed_records(str(cwd / 'perflogs'))


@pytest.fixture(scope='module')
def chromium():
    with browser.Chromium(height=1400) as c:
        yield c


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@pytest.fixture(scope='module')
def year(seeds, tmp_path_factory):
    """A year of 4 partitions, built by the command: (its directory, the build's wall and
    CPU seconds)."""
    tmp = tmp_path_factory.mktemp('year')
    year_history.write_year(seeds, str(tmp / 'perflogs'))
    start, cpu = time.monotonic(), cpu_seconds()
    proc = subprocess.run([sys.executable, '-m', 'ssb_references', 'dashboard', '--perflog-dir',
                           tmp / 'perflogs', '--out', tmp / 'page'], cwd=tmp,
                          capture_output=True, text=True, timeout=300)
    seconds = (time.monotonic() - start, cpu_seconds() - cpu)
    assert proc.returncode == 0, proc.stderr
    return tmp / 'page', seconds


def test_a_year_on_four_partitions_is_small_fast_and_draws_every_plot(year, chromium):
    out, (wall, cpu) = year
    size = os.path.getsize(out / 'index.html')
    load = chromium.load(out / 'index.html')
    print(f'built in {wall:.2f} s ({cpu:.2f} s of CPU), {size / MB:.2f} MB, drawn in '
          f'{load.seconds:.2f} s ({load.cpu:.2f} s of CPU)')
    # CPU seconds: the wall time on a machine of its own (other jobs on a shared one stretch
    # the wall time; benchmarks/dashboard.py measures both, alternated and repeated).
    assert cpu < 10 and size < 5 * MB and load.cpu < 3
    assert load.errors == [] and load.dialogs == []
    # Offline: the page and images inlined as data: URLs, nothing else.
    assert [u for u in load.requests if not u.startswith('data:')] == [
        f'file://{out}/index.html']
    # 8 TrainingTest cases and 4 gaps, each its own figure, and one side by side per test.
    figures = chromium.evaluate(load.session, '''[...Bokeh.documents[0].all_models]
        .filter((m) => m.constructor.__name__ === 'Figure').map((m) => m.title.text)''')
    assert len(figures) == 14
    assert 'cluster:gpu/hrvs/smallcnn/single' in figures
    assert load.elements['CANVAS'] >= 14 and load.elements['SELECT'] == 2
    assert 'steady epoch time (s)' in load.texts and 'hrvs lrfs gflops (ratio)' in load.texts
    assert 'Failed runs' in load.body and 'cluster:cpu' in load.body


def test_choosing_a_variable_redraws_every_test_case(year, chromium):
    out, _ = year
    load = chromium.load(out / 'index.html')
    choose(chromium, load, 'pixel_throughput')
    choose(chromium, load, 'hrvs_lrfs_host_memory')
    axes = chromium.evaluate(load.session, '''[...Bokeh.documents[0].all_models]
        .filter((m) => m.constructor.__name__ === 'LinearAxis').map((m) => m.axis_label)''')
    assert axes.count('pixel throughput (Mpx/s)') == 9          # 8 cases, side by side
    assert axes.count('hrvs lrfs host memory (ratio)') == 5
    time.sleep(0.5)
    chromium._drain(load.session, load)
    assert load.errors == []


def test_each_point_shows_its_session_date_payload_revision_and_nodes(seeds, year, chromium):
    out, _ = year
    # Night 300 is past the new payload series: the seed run's version, one minor up.
    seed_version = seeds['TrainingTest'][0]['payload_version']
    newer = year_history._series(seed_version, 300, 365)
    assert newer != seed_version
    load = chromium.load(out / 'index.html')
    (tip,) = chromium.hover(load, 'cluster:gpu/hrvs/smallcnn/single', 300)
    lines = dict(line.split(':\t', 1) for line in tip.splitlines()[1:9])
    assert tip.splitlines()[0] == '\t2025-10-28 02:17 UTC'          # night 300 of 2025
    assert lines['session'] == 'job 112011' and lines['payload'] == newer
    assert lines['git'] == year_history._revision(300)[:12]
    assert lines['nodes'].startswith('gpu-') and lines['verdict'] == 'ok'
    low, high = map(float, lines['history'].split(' to '))
    assert low < float(lines['value']) < high


def test_hostile_names_show_as_text(seeds, tmp_path, chromium):
    """A hostile system or partition name never reaches the page (runs/names.py leaves its
    runs out, one warning); a hostile variable name and node list do, as text."""
    name = HOSTILE['variable']
    seeds = {test: [dict(r) for r in records] for test, records in seeds.items()}
    for rec in seeds['TrainingTest']:             # a performance variable of that name
        rec.update({f'{name}_value': '1.5', f'{name}_unit': 's', f'{name}_ref': '0',
                    f'{name}_lower_thres': 'None', f'{name}_upper_thres': 'None'})
    logs = tmp_path / 'perflogs'
    year_history.write_year(seeds, str(logs), system=HOSTILE['system'],
                            partitions=(HOSTILE['partition'],), nights=3)
    year_history.write_year(seeds, str(logs), partitions=('cpu', 'gpu'), nights=30)
    cpu = logs / 'cluster' / 'cpu' / 'TrainingTest.log'
    cpu.write_text(cpu.read_text().replace('|cpu-', f'|{HOSTILE["partition"]}-'))
    proc = subprocess.run([sys.executable, '-m', 'ssb_references', 'dashboard',
                           '--perflog-dir', logs, '--out', tmp_path / 'page'],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"their system name '{HOSTILE['system']}' is not one ReFrame takes" in proc.stderr
    load = chromium.load(tmp_path / 'page' / 'index.html')
    choose(chromium, load, name)
    time.sleep(0.5)
    chromium._drain(load.session, load)
    assert load.dialogs == [] and load.errors == []
    assert not [t for t in load.texts if t.startswith('IMG')]      # no <img> was made
    assert [u for u in load.requests if not u.startswith('data:')] == [
        f'file://{tmp_path}/page/index.html']
    assert 'size-shape-bench history: cluster' in load.body and 'svg' not in load.body
    assert f'{name} (s)' in load.texts                                   # the chooser's
    tips = chromium.hover(load, 'cluster:cpu/lrfs/smallcnn/single', 20)
    assert f'nodes:\t{HOSTILE["partition"]}-' in tips[0]
    chromium._drain(load.session, load)
    assert load.dialogs == [] and load.errors == []
    assert chromium.evaluate(load.session, browser.DEEP)['texts'] == load.texts   # no new <img>


def build(perflogs, out):
    proc = subprocess.run([sys.executable, '-m', 'ssb_references', 'dashboard', '--perflog-dir',
                           perflogs, '--out', out], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return out / 'index.html'


def test_pages_of_a_single_run_and_of_nan_draw_and_say_so(seeds, tmp_path, chromium):
    year_history.write_year(seeds, str(tmp_path / 'one'), partitions=('cpu',), nights=1)
    load = chromium.load(build(tmp_path / 'one', tmp_path / 'one-page'))
    assert load.errors == [] and load.seconds is not None
    assert load.body.count('one run measured: no trend and no history interval yet') == 3
    year_history.write_year(seeds, str(tmp_path / 'nan'), partitions=('cpu',), nights=10)
    path = tmp_path / 'nan' / 'cluster' / 'cpu' / 'TrainingTest.log'
    fifth = [rec for _, rec in perflog.records(str(path))][4]
    path.write_text(path.read_text().replace(
        '|'.join(fifth.values()), '|'.join({**fifth, 'throughput_value': 'nan'}.values())))
    load = chromium.load(build(tmp_path / 'nan', tmp_path / 'nan-page'))
    assert load.errors == []
    assert 'throughput: no value in 1 of 10 passed runs' in load.body


def test_change_points_given_are_drawn_and_listed(seeds, tmp_path, chromium):
    year_history.write_year(seeds, str(tmp_path / 'perflogs'), partitions=('gpu',), nights=40)
    runs = [r for test in year_history.TESTS
            for r in perflog.read(perflog.files(str(tmp_path / 'perflogs'), None, test), test)]
    lrfs = next(r for r in runs if r.get('variant') == 'lrfs' and r.when.day == 20)
    point = series.ChangePoint('TrainingTest', ('cluster:gpu', 'lrfs', 'smallcnn', 'single'),
                               'steady_epoch_time', lrfs.time, 'session-20', 0.5, 0.6, 0.2,
                               0.0004)
    built = series.build(runs, lambda system, test: None, change_points=[point])
    html = page.render(built, runs, sources='perflogs')
    path = page.write(html, str(tmp_path / 'page'))
    load = chromium.load(path)
    drawn = '''[...Bokeh.documents[0].all_models]
        .filter((m) => m.data !== undefined && m.data.before !== undefined)
        .map((m) => m.data.session)'''
    assert chromium.evaluate(load.session, drawn) == [['session-20']]    # its figure only
    assert 'session-20' in load.body and '+20.0%' in load.body
    assert 'No change points found' not in load.body
    choose(chromium, load, 'throughput')            # shown with its variable only
    assert chromium.evaluate(load.session, drawn) == [[]]
    assert load.errors == []
