"""ssb-references changes: change points over each series' whole history, from perflogs as
ReFrame writes them, and what it says about bad input."""
import csv
import datetime

import numpy as np
import pytest

from reference_runs import T0, record, run_cli, write_perflog
from ssb_references.cli import references as cli


def night(n):
    """The job completion date of night ``n`` of a nightly history, as the files write it."""
    return datetime.datetime.fromtimestamp(T0 + n * 86400, datetime.timezone.utc).strftime(
        '%Y-%m-%dT%H:%M:%SZ')


def nightly(steps, n, variant='lrfs', cv=0.02, seed=0, first=0):
    """``n`` nightly records whose steady epoch time is 0.5 s times the step in force."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        level = 0.5 * np.prod([f for at, f in steps if i >= at])
        steady = level * (1 + cv * rng.standard_normal())
        out.append(record(float(steady), first + i * 1440, variant=variant))
    return out


def changes(capsys, perflog_dir, out):
    status, text, err = run_cli(capsys, 'changes', '--perflog-dir', perflog_dir, '--out', out)
    assert status == 0, err
    with open(out / 'changes.csv') as f:
        return text, list(csv.DictReader(f)), (out / 'changes.md').read_text()


def test_a_step_is_found_at_its_night_with_its_size_in_both_files(tmp_path, capsys):
    log = tmp_path / 'perflogs' / 'generic' / 'default' / 'TrainingTest.log'
    write_perflog(log, nightly([(60, 1.2)], 90) + nightly([], 40, 'hrvs', seed=1))
    text, rows, md = changes(capsys, tmp_path / 'perflogs', tmp_path / 'out')
    steady = [r for r in rows if r['variable'] == 'steady_epoch_time']
    assert [(r['key'], r['system_partition'], r['unit']) for r in steady] == [
        ('lrfs/smallcnn/single', 'generic:default', 's')]
    (r,) = steady
    # night 60: T0 + 60 days; perflogs have no session: the job ID
    assert r['date'] == night(60) and r['session'] == str(1000 + 60 * 1440)
    assert 17 <= float(r['change_pct']) <= 23 and float(r['pvalue']) <= 0.001
    assert abs(float(r['mean_before']) - 0.5) < 0.01 and r['runs_before'] == '60'
    # the rates follow the time, the other way
    (thr,) = [r for r in rows if r['variable'] == 'throughput']
    assert -20 <= float(thr['change_pct']) <= -13 and thr['session'] == r['session']
    assert {r['variable'] for r in rows} <= {'steady_epoch_time', 'first_epoch_time',
                                            'throughput', 'pixel_throughput'}
    assert 'steady_epoch_time' in md and '+2' in md and 'p-value' in md
    assert f'{len(rows)} change point(s) in ' in text and 'wrote' in text


def test_no_step_no_change_and_a_small_step_stays_under_the_floor(tmp_path, capsys):
    log = tmp_path / 'perflogs' / 'generic' / 'default' / 'TrainingTest.log'
    write_perflog(log, nightly([], 120) + nightly([(60, 1.03)], 120, 'hrvs', cv=0.005))
    _, rows, md = changes(capsys, tmp_path / 'perflogs', tmp_path / 'out')
    assert rows == [] and '0 change point(s) in' in md


def test_bad_input_is_one_line_each_and_nothing_is_merged(tmp_path, capsys):
    log = tmp_path / 'perflogs' / 'generic' / 'default' / 'TrainingTest.log'
    lrfs = nightly([], 30)
    lrfs[10], lrfs[11] = lrfs[11], lrfs[10]                  # out of time order
    lrfs.append(dict(lrfs[20]))                              # a duplicated session
    for rec in lrfs[25:30]:                                  # logged in another unit
        rec['host_peak_memory_unit'] = 'GiB'
    write_perflog(log, lrfs + nightly([], 4, 'hrvs'))        # too short
    status, text, err = run_cli(capsys, 'changes', '--perflog-dir', tmp_path / 'perflogs',
                                '--out', tmp_path / 'out')
    assert status == 0
    notes = [x for x in text.splitlines() if x.startswith('note: ')]
    # the swapped pair (the duplicate appended after night 29 is gone before: see below)
    assert [x for x in notes if 'sorted by job completion time' in x] == [
        f'note: {log}: 1 record(s) completed before the record of the same test case above '
        f'them: sorted by job completion time']
    # the repeated record counts once (runs/records.py), before any series is made
    assert err.splitlines() == [f'warning: {log}: the same run (same job or session, same '
                                f'values) more than once: counted once']
    assert any('host_peak_memory: logged in 2 units (GiB, MiB)' in x for x in notes)
    assert any('hrvs/smallcnn/single steady_epoch_time: left out: 4 point(s), the method '
               'needs at least 6' in x for x in notes)
    # GiB's 5 runs are a series of their own (too short), MiB's 25 judged apart from them
    assert any('host_peak_memory: left out: 5 point(s)' in x for x in notes)
    md = (tmp_path / 'out' / 'changes.md').read_text()
    assert 'Left out or set apart' in md and 'needs at least 6' in md


def test_options_are_checked(tmp_path, capsys):
    log = tmp_path / 'perflogs' / 'generic' / 'default' / 'TrainingTest.log'
    write_perflog(log, nightly([], 10))
    for option, value in (('--pvalue', '0'), ('--window', '0'), ('--min-change', '-1')):
        with pytest.raises(SystemExit):
            cli.main(['changes', '--perflog-dir', str(tmp_path / 'perflogs'), option, value])
        assert f'argument {option}' in capsys.readouterr().err
    status, _, err = run_cli(capsys, 'changes', '--perflog-dir', tmp_path / 'perflogs',
                             '--window', '4', '--out', tmp_path / 'o')
    assert status == 2 and 'error: the window (4) must hold two segments of 3' in err


def test_the_acceptance_summary_lists_the_change_points_of_the_last_nights(tmp_path):
    from reference_runs import runs_of
    from ssb_references.acceptance import recent_changes
    from ssb_references.judge import acceptance_judge
    runs = runs_of(nightly([(36, 0.8)], 40), tmp_path)        # 20% faster 4 nights ago
    last_week = recent_changes.recent_lines(runs, tmp_path / 'c', 7)
    assert len(last_week) == 3 and all(night(36) in x for x in last_week)
    assert any('steady_epoch_time: 0.49' in x and '(-19.' in x and 'improved' in x
               for x in last_week)
    assert recent_changes.recent_lines(runs, tmp_path / 'c', 2) == []     # 3 nights before
    assert (tmp_path / 'c' / 'changes.csv').exists()
    summary = {'system': 'generic', 'verdict': 'PASSED', 'exit_status': 0, 'counts': {},
               'regressed': [], 'improved': [], 'failed': [], 'notes': [],
               'change_nights': 7, 'recent_changes': last_week}
    text = acceptance_judge.render(summary)
    assert 'change points in the last 7 night(s) of the stored history (3; all: ' in text
    assert f'  {last_week[0]}' in text.splitlines()


def test_a_series_keeps_time_order_when_some_runs_logged_other_variables(tmp_path):
    from reference_runs import runs_of
    from ssb_references.judge import changes as changes_mod
    recs = nightly([], 12)
    for rec in recs[3:6]:                     # three nights without a throughput
        rec['throughput_value'] = 'nan'
    runs = runs_of(recs, tmp_path)
    series, _ = changes_mod.series_of(runs)
    (steady,) = [rs for k, rs in series.items() if k[3] == 'steady_epoch_time']
    (thr,) = [rs for k, rs in series.items() if k[3] == 'throughput']
    assert [r.time for r in steady] == sorted(r.time for r in runs) and len(steady) == 12
    assert [r.time for r in thr] == sorted(r.time for r in thr) and len(thr) == 9
