"""ssb_references: reading perflogs and the results database, the statistics of a proposal,
and its refusals (test_reference_files.py: the files and the tests' hook;
test_drift_report.py: drift and reports)."""
import json
import os
import sqlite3

import pytest
import yaml

from reference_runs import (PERF_UNITS, STEADY, T0, record, run_cli, runs_of, write_perflog)
from ssb_references import perflog, propose, reffile, resultsdb

# -- perflog and results DB reading ---------------------------------------------------------

def test_perflog_records_become_runs(tmp_path):
    (run,) = runs_of([record(0.5)], tmp_path)
    assert run.system == 'generic' and run.partition == 'generic:default'
    assert run.perf['steady_epoch_time'] == (0.5, 's')
    assert run.perf['distinct_shapes'] == (2.0, 'shapes')
    assert run.time == T0 and run.get('epochs') == '3'
    assert run.key(['variant', 'model', 'scale']) == ('generic:default', 'lrfs', 'smallcnn',
                                                      'single')


def test_runs_before_the_scale_parameter_count_as_single(tmp_path):
    old, new = runs_of([record(0.5, scale=None), record(0.5, 1)], tmp_path)
    assert old.key(['variant', 'model', 'scale']) == new.key(['variant', 'model', 'scale'])


def test_rotated_perflogs_are_read_oldest_first(tmp_path):
    base = tmp_path / 'perflogs' / 'generic' / 'default'
    write_perflog(base / 'TrainingTest.log.h0', [record(0.5, 0, scale=None)])
    write_perflog(base / 'TrainingTest.log', [record(0.6, 1)])
    files = perflog.files(str(tmp_path / 'perflogs'), 'generic')
    assert [os.path.basename(f) for f in files] == ['TrainingTest.log.h0', 'TrainingTest.log']
    assert [r.perf['steady_epoch_time'][0] for r in perflog.read(files)] == [0.5, 0.6]


def test_a_damaged_perflog_is_named(tmp_path):
    path = tmp_path / 'TrainingTest.log'
    path.write_text('pass|2027-01-15T08:00:00\n')
    with pytest.raises(perflog.PerflogError, match='before any header'):
        perflog.read([str(path)])


def make_results_db(path, records):
    """A results DB with ReFrame's schema holding one session per record."""
    conn = sqlite3.connect(path)
    conn.execute('CREATE TABLE sessions(uuid TEXT PRIMARY KEY, session_start_unix REAL, '
                 'session_end_unix REAL, json_blob TEXT, report_file TEXT)')
    for i, rec in enumerate(records):
        tc = {k: v for k, v in rec.items() if not k.split('_')[-1] in
              ('value', 'unit', 'ref', 'thres')}
        tc['name'] = f'TrainingTest %variant={rec["variant"]} %model=smallcnn'
        tc['job_completion_time_unix'] = float(rec['job_completion_time_unix'])
        tc['epochs'] = int(rec['epochs'])
        tc['perfvalues'] = {
            f'{rec["system"]}:{rec["partition"]}:{n}':
                [float(rec[f'{n}_value']), 0, None, None, rec[f'{n}_unit'], 'pass']
            for n in PERF_UNITS}
        fixture = {'name': 'SyntheticMAMe', 'perfvalues': {}}
        blob = {'session_info': {'uuid': f'uuid-{i}', 'time_end_unix': T0},
                'runs': [{'testcases': [fixture, tc]}]}
        conn.execute('INSERT INTO sessions VALUES(?, ?, ?, ?, ?)',
                     (f'uuid-{i}', T0 + i, T0 + i, json.dumps(blob), ''))
    conn.commit()
    conn.close()


def test_results_db_and_perflog_give_the_same_runs(tmp_path):
    recs = [record(s, i) for i, s in enumerate(STEADY)]
    db = str(tmp_path / 'results.db')
    make_results_db(db, recs)
    from_db = resultsdb.read(db)
    from_log = runs_of(recs, tmp_path)
    assert [r.perf for r in from_db] == [r.perf for r in from_log]
    assert [r.workload() for r in from_db] == [r.workload() for r in from_log]
    assert [r.session for r in from_db] == ['uuid-0', 'uuid-1', 'uuid-2']
    assert len(resultsdb.read(db, sessions={'uuid-1'})) == 1


def test_a_missing_results_db_says_how_to_enable_it(tmp_path):
    with pytest.raises(resultsdb.ResultsDBError, match='RFM_ENABLE_RESULTS_STORAGE'):
        resultsdb.read(str(tmp_path / 'none.db'))


# -- statistics ----------------------------------------------------------------------------

def test_quiet_runs_get_the_floor_on_the_worse_side_only():
    p = propose.propose_variable('steady_epoch_time', [1.0, 1.02, 0.99], 's')
    assert p.value == 1.0
    assert (p.lower, p.upper) == (None, 0.1)          # 3 x 2% < 10% floor
    assert p.as_list() == [1.0, None, 0.1, 's']


def test_noisy_runs_widen_the_band_by_three_times_their_spread():
    p = propose.propose_variable('steady_epoch_time', [1.0, 1.2, 0.9], 's')
    assert p.value == 1.0 and p.upper == pytest.approx(0.6)


def test_the_median_resists_an_outlier():
    p = propose.propose_variable('host_peak_memory', [1000, 1001, 999, 1000, 5000], 'MiB')
    assert p.value == 1000


def test_absolute_floor_guards_small_values():
    p = propose.propose_variable('steady_epoch_time', [0.1, 0.1, 0.1], 's')
    assert p.upper == 0.5                                # 0.05 s of 0.1 s
    p = propose.propose_variable('input_wait_fraction', [0.0, 0.0, 0.0], 'fraction')
    assert (p.value, p.lower, p.upper) == (0.0, None, 0.05)   # value 0: absolute thresholds


def test_higher_is_better_bounds_the_lower_side_within_reframe_limits():
    p = propose.propose_variable('parallel_efficiency', [0.9, 0.91, 0.89], 'fraction')
    assert p.upper is None and p.lower == -0.1
    p = propose.propose_variable('parallel_efficiency', [0.2, 0.9, 0.5], 'fraction')
    assert p.lower == -1.0                               # ReFrame: lower_thres >= -1


def test_counts_are_bounded_on_both_sides():
    p = propose.propose_variable('distinct_shapes', [58, 58, 58], 'shapes')
    assert p.value == 58 and p.lower == -0.00863 and p.upper == 0.00863
    lo, hi = reffile.band(p.value, p.lower, p.upper)
    assert lo < 58 < hi and not lo <= 57 and not 59 <= hi
    p = propose.propose_variable('distinct_shapes', [37407] * 3, 'shapes')
    assert reffile.band(p.value, p.lower, p.upper) == pytest.approx((37406.49, 37407.51),
                                                                   abs=0.01)


def test_rounding_never_narrows_the_band():
    values = [0.3, 0.31, 0.29]
    p = propose.propose_variable('steady_epoch_time', values, 's')
    lo, hi = reffile.band(p.value, p.lower, p.upper)
    assert all(lo <= v <= hi for v in values)
    assert p.upper >= p.tolerance


def test_throughput_follows_the_steady_epoch_time(tmp_path):
    runs = runs_of([record(s, i) for i, s in enumerate([1.0, 1.2, 0.9])], tmp_path)
    (kp,) = propose.propose(runs, 'generic')[0].values()
    t_s = kp.variables['steady_epoch_time'].tolerance
    assert kp.variables['throughput'].tolerance == pytest.approx(t_s / (1 + t_s))
    assert kp.variables['throughput'].lower == kp.variables['pixel_throughput'].lower


def test_min_tolerance_raises_floors_but_not_counts(tmp_path):
    runs = runs_of([record(s, i) for i, s in enumerate(STEADY)], tmp_path)
    (kp,) = propose.propose(runs, 'generic', min_tolerance=1.0)[0].values()
    assert kp.variables['steady_epoch_time'].upper == 1.0
    assert kp.variables['throughput'].lower == -0.5
    assert kp.variables['distinct_shapes'].upper == 0.25


def test_last_n_uses_the_newest_runs(tmp_path):
    runs = runs_of([record(s, i) for i, s in enumerate([9.0, 9.0, 1.0, 1.0, 1.0])], tmp_path)
    (kp,) = propose.propose(runs, 'generic', last_n=3)[0].values()
    assert kp.variables['steady_epoch_time'].value == 1.0 and len(kp.runs) == 3


# -- refusals ------------------------------------------------------------------------------

def test_refuses_too_few_runs(tmp_path):
    runs = runs_of([record(0.5, 0), record(0.5, 1)], tmp_path)
    with pytest.raises(propose.Refusal, match=r'lrfs/smallcnn/single: 2 run\(s\), at least 3'):
        propose.propose(runs, 'generic')


def test_skip_incomplete_leaves_out_keys_with_too_few_runs(tmp_path):
    recs = [record(s, i) for i, s in enumerate(STEADY)] + [record(1.0, 9, variant='hrvs')]
    proposals, skipped = propose.propose(runs_of(recs, tmp_path), 'generic',
                                         skip_incomplete=True)
    assert [k[1] for k in proposals] == ['lrfs'] and 'hrvs' in skipped[0]


def test_refuses_runs_of_another_system(tmp_path):
    recs = [record(s, i) for i, s in enumerate(STEADY)] + [record(0.5, 5, system='other')]
    with pytest.raises(propose.Refusal, match="other systems \\(other\\)"):
        propose.propose(runs_of(recs, tmp_path), 'generic')


def test_refuses_mixed_tensorflow_versions_unless_allowed(tmp_path):
    recs = [record(0.5, 0, tf='2.16.1'), record(0.5, 1), record(0.5, 2)]
    runs = runs_of(recs, tmp_path)
    with pytest.raises(propose.Refusal, match='mix TensorFlow versions 2.16.1, 2.21.0'):
        propose.propose(runs, 'generic')
    (kp,) = propose.propose(runs, 'generic', allow_mixed_versions=True)[0].values()
    assert kp.meta()['tensorflow_version'] == ['2.16.1', '2.21.0']


def test_refuses_mixed_workloads_and_environments(tmp_path):
    runs = runs_of([record(0.5, 0, epochs=2), record(0.5, 1), record(0.5, 2)], tmp_path)
    with pytest.raises(propose.Refusal, match=r'epochs: 2 \(1 runs\), 3 \(2 runs\).*--where'):
        propose.propose(runs, 'generic')
    runs = runs_of([record(0.5, 0, environ='tf-2.16'), record(0.5, 1), record(0.5, 2)], tmp_path)
    with pytest.raises(propose.Refusal, match='mix environments builtin, tf-2.16'):
        propose.propose(runs, 'generic')


def test_cli_refusal_is_a_clear_message_and_status_2(tmp_path, capsys, perflog_dir):
    status, out, err = run_cli(capsys, 'update', '--perflog-dir', perflog_dir,
                               '--reference-dir', tmp_path / 'refs', '--min-runs', 4)
    assert status == 2 and not out
    assert err.startswith("ssb-references update: error: cannot propose references for 'generic'")
    assert '3 run(s), at least 4 needed' in err
    assert not (tmp_path / 'refs').exists()


def test_cli_where_selects_one_workload(tmp_path, capsys):
    recs = [record(0.5, 0, epochs=2)] + [record(s, 1 + i) for i, s in enumerate(STEADY)]
    write_perflog(tmp_path / 'p' / 'generic' / 'default' / 'TrainingTest.log', recs)
    status, out, _ = run_cli(capsys, 'propose', '--perflog-dir', tmp_path / 'p',
                             '--reference-dir', tmp_path / 'refs', '--where', 'epochs=3',
                             '--last', 10)
    assert status == 0 and yaml.safe_load(out)['ssb-references']['entries'][
        'generic:default/lrfs/smallcnn/single']['runs'] == 3


