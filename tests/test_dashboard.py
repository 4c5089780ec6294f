"""``ssb-references dashboard`` from the command line: what the page holds, each bad input's
page or error line, and its verdicts against drift's own (test_dashboard_browser.py loads the
pages in Chromium). The history is benchmarks/year_history.py's, made from the records of
the README's real run."""
import collections
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

from benchmarks import year_history
from ssb_references.dashboard import build, series
from ssb_references.judge import drift
from ssb_references.runs import perflog
from ssb_references.runs.run import TESTS, index_attrs


@pytest.fixture(scope='session')
def seeds(default_run):
    cwd, _ = default_run
    return year_history.seed_records(str(cwd / 'perflogs'))


def dashboard(*args, cwd, user=()):
    return subprocess.run([*user, sys.executable, '-m', 'ssb_references', 'dashboard',
                           *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def history(seeds, where, nights, partitions=('cpu', 'gpu')):
    year_history.write_year(seeds, str(where), partitions=partitions, nights=nights)
    return where


def error_line(proc):
    assert proc.returncode == 2 and proc.stdout == ''
    (line,) = proc.stderr.splitlines()
    assert line.startswith('ssb-references dashboard: error: ')
    return line


def test_a_quarter_on_two_partitions(seeds, tmp_path):
    logs = history(seeds, tmp_path / 'perflogs', 90)
    proc = dashboard('--perflog-dir', logs, '--out', tmp_path / 'page', cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f'wrote {tmp_path}/page/index.html: 6 test case(s), 540 runs\n'
    assert os.listdir(tmp_path / 'page') == ['index.html']
    page = (tmp_path / 'page' / 'index.html').read_text()
    assert '<title>size-shape-bench history: cluster</title>' in page
    assert '540 runs of cluster, 2025-01-01 to 2025-03-31' in page
    # Night 60 failed its sanity check on the first partition: its three records are listed.
    assert page.count('<td>2025-03-01 ') == 3 and page.count('<td>fail</td>') == 3
    assert '<h2>Partitions side by side: LR&amp;FS and HR&amp;VS</h2>' in page
    assert '<td>cluster:gpu/smallcnn/single</td><td>steady_epoch_time</td>' in page
    # The change points ssb-references changes finds in these perflogs: one row each.
    runs = [r for test in TESTS for r in perflog.read(perflog.files(logs, None, test), test)]
    points = build.change_points(runs)
    section = page.split('<h2>Change points</h2>')[1].split('<h2>Failed runs</h2>')[0]
    assert section.count('<tr>') == (len(points) + 1 if points else 0)
    assert points or 'No change points found' in section
    # Inline and offline: no script, style or font from anywhere else (the browser test
    # records every request the page makes).
    html = re.sub(r'(<script\b[^>]*>).*?</script>', r'\1', page, flags=re.DOTALL)
    assert len(html) < 20_000 and re.findall(r'<[^>]*\b(?:src|href)=', html) == []


def test_each_verdict_and_interval_is_drifts(seeds, tmp_path):
    """The page judges every run as drift judges the newest: checked against drift itself
    for runs judged against the references (too little history), before and after the new
    payload series, and the newest."""
    logs = history(seeds, tmp_path / 'perflogs', 60)
    update = subprocess.run([sys.executable, '-m', 'ssb_references', 'update', '--perflog-dir',
                             logs, '--reference-dir', tmp_path / 'refs', '--until', '2025-01-20'],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert update.returncode == 0, update.stderr
    refs_of = build.references_of(str(tmp_path / 'refs'))
    runs = [r for test in year_history.TESTS
            for r in perflog.read(perflog.files(str(logs), None, test), test)]
    checked = collections.Counter()
    for s in series.build(runs, refs_of):
        mine = [r for r in runs if r.test == s.test]
        for at in (1, 10, 23, 24, 26, 59):       # the new series starts at night 24
            run = s.runs[at]
            for v in drift.judge_run(run, mine, index_attrs(mine), refs_of(s.system, s.test)):
                code = s.verdicts[v.variable][at]
                low, high = (x[at] for x in s.intervals[v.variable])
                if series.failed(run):
                    assert code == series.FAILED
                elif v.basis == 'history':
                    assert series.VERDICTS[code] == v.status
                    assert low == pytest.approx(v.interval.low, rel=1e-6)
                    assert high == pytest.approx(v.interval.high, rel=1e-6)
                else:
                    assert code == (series.NO_HISTORY if v.basis == 'none' else
                                    series.VERDICTS.index(v.status))
                    assert math.isnan(low) and math.isnan(high)
                checked[v.basis] += 1
    assert checked['history'] > 150 and checked['references'] > 50


def test_systems_side_by_side_or_one_of_them(seeds, tmp_path):
    for system in ('alpha', 'beta'):
        year_history.write_year(seeds, str(tmp_path / 'perflogs'), system=system,
                                partitions=('gpu',), nights=5)
    proc = dashboard('--out', tmp_path / 'both', cwd=tmp_path)
    assert proc.returncode == 0 and '6 test case(s), 30 runs' in proc.stdout, proc.stderr
    page = (tmp_path / 'both' / 'index.html').read_text()
    assert '<title>size-shape-bench history: alpha, beta</title>' in page
    assert '<td>alpha:gpu/smallcnn/single</td>' in page
    assert '<td>beta:gpu/smallcnn/single</td>' in page
    proc = dashboard('--system', 'beta', '--out', tmp_path / 'beta', cwd=tmp_path)
    assert proc.returncode == 0 and '3 test case(s), 15 runs' in proc.stdout, proc.stderr
    page = (tmp_path / 'beta' / 'index.html').read_text()
    assert '<title>size-shape-bench history: beta</title>' in page and 'alpha:gpu' not in page
    line = error_line(dashboard('--since', '2025-02-01', '--out', tmp_path / 'none',
                                cwd=tmp_path))
    assert line.endswith('no runs selected: nothing to show')


def test_no_perflogs_is_one_error_line(tmp_path):
    (tmp_path / 'perflogs').mkdir()
    line = error_line(dashboard('--out', tmp_path / 'page', cwd=tmp_path))
    assert line.endswith('no perflogs perflogs/*/*/TrainingTest.log: run the suite first, '
                         'or pass --perflog or --db')
    assert not (tmp_path / 'page').exists()


def test_a_variable_with_a_single_point_says_so(seeds, tmp_path):
    logs = history(seeds, tmp_path / 'perflogs', 1, partitions=('cpu',))
    proc = dashboard('--perflog-dir', logs, '--out', tmp_path / 'page', cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / 'page' / 'index.html').read_text()
    assert page.count('<li class="note">one run measured: no trend and no history interval '
                      'yet</li>') == 3                           # each test case says so


def test_a_series_with_nan_says_how_many_values_are_missing(seeds, tmp_path):
    logs = history(seeds, tmp_path / 'perflogs', 10, partitions=('cpu',))
    path = logs / 'cluster' / 'cpu' / 'TrainingTest.log'
    lines = path.read_text().splitlines()
    column = lines[0].split('|').index('steady_epoch_time_value')
    for n in (3, 5):                            # two records of LR&FS: nan and -nan
        fields = lines[n].split('|')
        fields[column] = 'nan' if n == 3 else '-nan'
        lines[n] = '|'.join(fields)
    path.write_text('\n'.join(lines) + '\n')
    proc = dashboard('--perflog-dir', logs, '--out', tmp_path / 'page', cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / 'page' / 'index.html').read_text()
    assert ('steady_epoch_time: no value in 2 of 10 passed runs (not measured, or not a '
            'finite number)') in page


def test_an_output_directory_that_is_a_link_is_refused(seeds, tmp_path):
    logs = history(seeds, tmp_path / 'perflogs', 3, partitions=('cpu',))
    (tmp_path / 'elsewhere').mkdir()
    (tmp_path / 'page').symlink_to(tmp_path / 'elsewhere')
    line = error_line(dashboard('--perflog-dir', logs, '--out', tmp_path / 'page',
                                cwd=tmp_path))
    assert line.endswith(f'{tmp_path}/page is a symbolic link: refusing to follow it '
                         f'(remove it)')
    assert os.listdir(tmp_path / 'elsewhere') == []
    # A planted index.html link is not written through either.
    (tmp_path / 'page').unlink()
    (tmp_path / 'page').mkdir()
    (tmp_path / 'page' / 'index.html').symlink_to(tmp_path / 'elsewhere' / 'victim')
    line = error_line(dashboard('--perflog-dir', logs, '--out', tmp_path / 'page',
                                cwd=tmp_path))
    assert 'index.html\' is a symbolic link' in line
    assert os.listdir(tmp_path / 'elsewhere') == []


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which('setpriv'),
                    reason='runs the command as nobody: needs root and setpriv')
def test_an_output_directory_this_user_cannot_write_is_refused(seeds):
    base = tempfile.mkdtemp(prefix='ssb-dashboard-')      # readable by nobody
    try:
        os.chmod(base, 0o755)
        logs = history(seeds, os.path.join(base, 'perflogs'), 3, partitions=('cpu',))
        os.makedirs(os.path.join(base, 'page'))
        nobody = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups']
        for out, says in ((os.path.join(base, 'new'), 'cannot make {}: Permission denied'),
                          (os.path.join(base, 'page'), '{} is not writable by this user')):
            line = error_line(dashboard('--perflog-dir', logs, '--out', out, cwd=base,
                                        user=nobody))
            assert line.endswith(says.format(out))
        assert os.listdir(os.path.join(base, 'page')) == []
    finally:
        shutil.rmtree(base)
