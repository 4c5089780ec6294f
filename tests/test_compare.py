"""``ssb-references compare`` on real runs: two systems side by side, and one system before
and after a change.

ReFrame's ``generic`` system runs LR&FS, HR&VS and their gap 3 times (one session, with
``--reruns 2``); ``onecore`` (tests/onecore_config.py: the same machine under another name)
runs them 3 times pinned to one core with ``taskset -c 0``. Their perflogs are copied into
one directory, as two sites' would be. Then generic runs LR&FS 3 more times, pinned too:
the "after" of a maintenance that left the jobs on one core. Small data (116 images), 3
epochs and HR&VS traced as 2 graphs (reduced retracing), not one per shape: about 2 minutes
in all, on an otherwise idle 2-core machine (as CI's: on a busy one, the two-core runs lose
their second core and the differences their significance).

A comparison's rows are judged together (Benjamini-Hochberg at 1 - confidence over all of
them: identical sides stay unmarked), so with 3 runs a side a row needs a much smaller
p-value than alone: a 45% drop among about 34 rows is marked in 97% of comparisons when the
runs vary by 5%, in 63% when they vary by 10% (alone: 99%; tests/test_family.py,
test_rows_judged_together_miss_a_large_drop_only_when_the_runs_are_noisy). So the real runs'
marks are asserted where the runs were as quiet as an idle machine's (``QUIET_CV``); on a
busy machine, that every mark follows its interval and the slowdown its direction.
"""
import csv
import datetime
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest
from scipy import stats as sps

from conftest import REPO
from ssb_contract import perf
from ssb_contract.options import VARIANTS
from reframe_runs import run_reframe
from ssb_references.compare import compare
from ssb_references.judge import stats
from ssb_references.runs.run import Run

# Serial: no job's TensorFlow import beside another job's timed epochs. HR&VS with reduced
# retracing: 2 graphs instead of one per shape (96), half its run's time; compare reads the
# figures, not how they were traced.
SMALL = ['-S', 'TrainingTest.epochs=3', '-S', 'SyntheticMAMe.images_per_class=4',
         '-S', 'TrainingTest.retracing=reduced', '--exec-policy=serial']
SUITE = ['-n', '(TrainingTest|SizeShapeGap).*scale=single']
ONECORE = os.path.join(REPO, 'tests', 'onecore_config.py')
PIN = ('taskset', '-c', '0')
#: Runs that vary by at most this much (coefficient of variation on each side): an idle
#: machine's, where 3 runs a side mark a 45% drop among all the rows.
QUIET_CV = 0.05


def ssb(*args, cwd):
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.run([sys.executable, '-m', 'ssb_references', *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300, env=env)


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S')


def other_epochs(path, epochs):
    """Append the file's records again with another ``epochs``: runs of another workload."""
    with open(path) as f:
        lines = [line.rstrip('\n').split('|') for line in f if line.strip()]
    header = lines[0]
    at = header.index('epochs')
    with open(path, 'a') as f:
        for fields in lines[1:]:
            if fields[0] != 'result':
                f.write('|'.join(fields[:at] + [str(epochs)] + fields[at + 1:]) + '\n')


@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    cwd = tmp_path_factory.mktemp('compare')
    env = {'RFM_ENABLE_RESULTS_STORAGE': '1', 'RFM_SQLITE_DB_FILE': str(cwd / 'results.db')}
    stamps = [utc_now()]
    for config, prefix, select in ((None, (), SUITE), (ONECORE, PIN, SUITE),
                                   (None, PIN, ['-n', 'TrainingTest.*lrfs.*scale=single'])):
        system = ['--system', 'onecore'] if config else []
        time.sleep(1.1)                 # the date ranges below split at whole seconds
        proc = run_reframe('-r', *select, *SMALL, *system, '--reruns', 2, cwd=cwd,
                           config=config, env=env, prefix=prefix)
        assert proc.returncode == 0, proc.stdout[-3000:]
        stamps.append(utc_now())
        time.sleep(1.1)
        if config:                      # two sites' perflogs, copied into one directory
            shutil.copytree(cwd / 'perflogs', cwd / 'sites')
    with sqlite3.connect(cwd / 'results.db') as conn:
        sessions = [u for (u,) in conn.execute('SELECT uuid FROM sessions '
                                               'ORDER BY session_start_unix')]
    assert len(sessions) == 3
    return cwd, stamps, sessions


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def row(rows, system, variant, variable):
    (found,) = [r for r in rows if r['system'] == system and r['variant'] == variant
                and r['variable'] == variable]
    return found


def quiet(*found):
    return all(r['cv'] != '' and float(r['cv']) <= QUIET_CV for r in found)


def marked_as_its_interval_says(found):
    low, high = float(found['ci_low']), float(found['ci_high'])
    return found['significant'] == ('no' if low <= 1 <= high else 'yes')


def test_two_systems_side_by_side(runs):
    cwd, _, _ = runs
    other_epochs(cwd / 'sites' / 'onecore' / 'default' / 'TrainingTest.log', 4)
    proc = ssb('compare', '--perflog-dir', 'sites', '--system', 'generic', '--system',
               'onecore', '--out', 'systems', cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    out = cwd / 'systems'
    rows = read_csv(out / 'compare.csv')
    assert list(rows[0]) == ['system', 'partition', 'model', 'variant', 'variable', 'unit', 'n',
                             'median', 'cv', 'ratio', 'ci_low', 'ci_high', 'significant']
    # LR&FS (batches of 16) uses both cores: one core is slower, significantly so where the
    # runs were quiet. HR&VS (one image a step) gains little or nothing from the second core
    # (CI once measured the pinned HR&VS 1.23x faster, interval [1.06, ...]).
    pinned = row(rows, 'onecore', 'lrfs', 'throughput')
    assert pinned['n'] == '3' and pinned['unit'] == 'img/s' and float(pinned['ratio']) < 1
    if quiet(pinned, row(rows, 'generic', 'lrfs', 'throughput')):
        assert pinned['significant'] == 'yes' and float(pinned['ci_high']) < 1
    # HR&VS's mark follows its interval, whichever way the noise of one-image steps falls.
    for variant in VARIANTS:
        pinned = row(rows, 'onecore', variant, 'throughput')
        low, ratio, high = (float(pinned[k]) for k in ('ci_low', 'ratio', 'ci_high'))
        assert low < ratio < high and marked_as_its_interval_says(pinned)
        base = row(rows, 'generic', variant, 'throughput')
        assert base['ratio'] == '' and base['significant'] == ''
    for system in ('generic', 'onecore'):
        gap = row(rows, system, 'gap', 'hrvs_lrfs_time_per_mpx')
        assert gap['n'] == '3' and float(gap['median']) > 1
    # No spread or interval bound is compared as a value of its own.
    assert not {r['variable'] for r in rows} & {v.name for v in perf.PERF_VARS
                                                 if v.spread_of}
    md = (out / 'compare.md').read_text()
    for variant in VARIANTS:    # the other epochs' records, named with the reason
        assert (f'onecore smallcnn/{variant}/single: 3 run(s), another workload: epochs=4 '
                f'(compared: 3)') in md
    assert 'a value only against the same unit' in md and '95% Welch interval' in md
    # The two-core system suffers more from size and shape: its LR&FS gains more.
    assert md.rstrip().splitlines()[-1].startswith(
        'Largest HR&VS/LR&FS gap (hrvs_lrfs_time_per_mpx), smallcnn at scale single: '
        '**generic**')
    assert 'HR&VS over LR&FS (SizeShapeGap)' in md and '| throughput | HR&VS | img/s |' in md
    assert (out / 'compare.png').stat().st_size > 10000
    assert 'left out: onecore smallcnn/lrfs/single: 3 run(s)' in proc.stdout


def test_before_and_after_by_session(runs):
    cwd, _, sessions = runs
    proc = ssb('compare', '--db', 'results.db', '--system', 'generic', '--before', sessions[0],
               '--after', sessions[2], '--out', 'sessions', cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    rows = read_csv(cwd / 'sessions' / 'compare.csv')
    after = row(rows, 'after', 'lrfs', 'throughput')
    assert float(after['ratio']) < 1 and marked_as_its_interval_says(after)
    if quiet(after, row(rows, 'before', 'lrfs', 'throughput')):
        assert after['significant'] == 'yes' and float(after['ci_high']) < 1
    assert row(rows, 'after', 'lrfs', 'distinct_shapes')['significant'] == 'no'
    assert {r['variant'] for r in rows} == {'lrfs'}       # the after side ran LR&FS only
    md = (cwd / 'sessions' / 'compare.md').read_text()
    assert 'before generic:default/smallcnn/hrvs/single: no other side has this workload' in md


def test_before_and_after_by_date_range(runs):
    cwd, stamps, _ = runs
    before, after = f'{stamps[0]}..{stamps[1]}', f'{stamps[2]}..'
    proc = ssb('compare', '--before', f'{stamps[0]}..{stamps[2]}', '--after', after, cwd=cwd)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        'ssb-references compare: error: runs of 2 systems (generic, onecore): pass --system, '
        'before and after are of one system']
    proc = ssb('compare', '--system', 'generic', '--before', before, '--after', after,
               '--confidence', 0.9, '--no-plots', cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    rows = read_csv(cwd / 'ssb-compare' / 'compare.csv')
    after = row(rows, 'after', 'lrfs', 'throughput')
    assert float(after['ratio']) < 1 and marked_as_its_interval_says(after)
    if quiet(after, row(rows, 'before', 'lrfs', 'throughput')):
        assert after['significant'] == 'yes'
    assert '90% Welch interval' in (cwd / 'ssb-compare' / 'compare.md').read_text()
    assert not (cwd / 'ssb-compare' / 'compare.png').exists()


@pytest.mark.parametrize('args, message', [
    (['--system', 'generic', '--system', 'onecore', '--confidence', '1'], 'between 0 and 1'),
    (['--system', 'generic'], 'at least two systems'),
    (['--system', 'generic', '--system', 'nowhere'], "no runs of 'nowhere'"),
    (['--before', '2026-01-01..2026-02-01'], '--before and --after go together'),
    (['--before', '2026-01-01..2026-13-01', '--after', '2026-03-01..'], 'invalid time'),
    (['--before', 'yesterday', '--after', '2026-03-01..'], 'neither a date range'),
    (['--before', '2026-02-01..2026-01-01', '--after', '2026-03-01..'], 'ends before'),
    (['--before', '0' * 8 + '-0000-0000-0000-' + '0' * 12, '--after', '2026-03-01..'],
     'session UUIDs need --db'),
])
def test_every_failure_is_one_error_line(runs, args, message):
    cwd, _, _ = runs
    proc = ssb('compare', '--perflog-dir', 'sites', *args, cwd=cwd)
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith('ssb-references compare: error: ') and message in line, line


# The statistics on hand-made samples, against scipy.

def test_the_ratio_its_interval_and_the_decision_are_welchs_on_the_logarithms():
    rng = np.random.default_rng(1)
    for shift in (1.0, 1.05, 1.3, 0.6):
        for n in (3, 5):
            a, b = rng.lognormal(3, 0.08, n), rng.lognormal(3, 0.08, n) * shift
            for confidence in (0.9, 0.95, 0.99):
                iv = stats.ratio_interval(b, a, confidence)
                test = sps.ttest_ind(np.log(b), np.log(a), equal_var=False)
                ci = test.confidence_interval(confidence)
                assert (math.log(iv.low), math.log(iv.high)) == pytest.approx((ci.low, ci.high))
                assert stats.differs(iv) == (test.pvalue < 1 - confidence)
    centre = stats.centre_interval([10.0, 12.0, 11.0, 14.0], 0.95)
    logs = np.log([10.0, 12.0, 11.0, 14.0])
    low, high = sps.t.interval(0.95, 3, loc=logs.mean(), scale=sps.sem(logs))
    assert centre.centre == pytest.approx(math.exp(logs.mean()))
    assert (centre.low, centre.high) == pytest.approx((math.exp(low), math.exp(high)))
    assert stats.centre_interval([1.0]) is None and stats.centre_interval([1.0, 0.0]) is None
    assert not stats.differs(stats.ratio_interval([96.0] * 3, [96.0] * 3))
    assert stats.differs(stats.ratio_interval([97.0] * 3, [96.0] * 3))


def hand_made(system, values, epochs='3'):
    return [Run(system, f'{system}:default', 'TrainingTest',
                {'variant': 'lrfs', 'model': 'smallcnn', 'epochs': epochs,
                 'payload_version': '1.2.0', 'name': f'{system}{i}{epochs}'},
                {'throughput': (v, 'img/s')}, 1000.0 + i, 'hand') for i, v in enumerate(values)]


def test_fewer_than_three_runs_give_no_interval_and_no_mark():
    sides = {'a': hand_made('a', [100.0, 101.0, 99.0]), 'b': hand_made('b', [50.0, 51.0])}
    result = compare.compare(sides, 0.95)
    (b,) = [r for r in result.rows if r.side == 'b']
    assert b.ratio == pytest.approx(math.sqrt(50 * 51) / (100 * 101 * 99) ** (1 / 3))
    assert b.interval is None and b.significant == 'n<3'
    assert result.notes == ['b smallcnn/lrfs/single: 2 run(s), fewer than 3: no interval, '
                            'no significance mark']
    sides['b'] = hand_made('b', [50.0, 51.0, 49.0], epochs='4')
    result = compare.compare(sides, 0.95)
    assert result.rows == []
    assert result.left_out == ['b smallcnn/lrfs/single: 3 run(s), another workload: epochs=4 '
                               '(compared: 3)',
                               'a smallcnn/lrfs/single: no other side has this workload: '
                               'nothing to compare with']


def test_a_number_is_never_compared_across_units():
    b = hand_made('b', [0.05, 0.051, 0.049])
    for run in b:                       # the same rate, logged in thousands
        run.perf['throughput'] = (run.perf['throughput'][0], 'kimg/s')
    result = compare.compare({'a': hand_made('a', [50.0, 51.0, 49.0]), 'b': b}, 0.95)
    assert result.rows == []
    assert result.left_out == ['smallcnn/lrfs/single throughput: units differ (a: img/s, '
                               'b: kimg/s): not compared']

