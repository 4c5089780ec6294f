"""ssb_references: reading perflogs and the results database, the statistics of a proposal,
and its refusals (test_reference_files.py: the files and the tests' hook;
test_drift_report.py: drift and reports)."""
import os
import re
import subprocess

import pytest
import yaml

from reference_runs import (PERF_UNITS, STEADY, T0, perf_values, record, run_cli, runs_of,
                            write_perflog)
from ssb_references.reffile import propose, reffile
from ssb_references.runs import perflog, resultsdb

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


STORED_CHECK = """
import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_before, sanity_function, variable

PERF_UNITS = {units!r}

{perf_values}

@rfm.simple_test
class TrainingTest(rfm.RunOnlyRegressionTest):
    \"\"\"Stands in for the suite's TrainingTest: its workload variables, and performance
    values that follow from the steady epoch time given with -S steady=...\"\"\"
    valid_systems = ['*']
    valid_prog_environs = ['*']
    executable = 'true'
    steady = variable(float, value=0.5)
{variables}

    @sanity_function
    def ran(self):
        return sn.assert_eq(self.job.exitcode, 0)

    @run_before('performance')
    def measured(self):
        self.perf_variables = {{
            name: sn.make_performance_function(lambda v=value: v, PERF_UNITS[name])
            for name, value in perf_values(self.steady, self.variant).items()}}
"""
# The record()'s test variables, as TrainingTest declares them (ReFrame adds the rest).
STORED_VARIABLES = {'batch_size': 'int', 'crop_size': 'int', 'dataset': 'str', 'device': 'str',
                    'epochs': 'int', 'hrvs_batching': 'str', 'image_size': 'int',
                    'model': 'str', 'pixel_budget': 'str', 'retracing': 'str', 'subset': 'str',
                    'precision': 'str', 'jit_compile': 'typ.Bool', 'training_step': 'str',
                    'tensorflow_version': 'str', 'variant': 'str', 'scale': 'str'}


@pytest.fixture(scope='module')
def stored(tmp_path_factory):
    """Three sessions of a stand-in TrainingTest run by ReFrame: its results database, its
    perflog, and the session UUIDs it printed, in order."""
    import inspect

    from reframe_runs import REFRAME
    tmp = tmp_path_factory.mktemp('stored')
    rec = record(0.5)
    variables = '\n'.join(f'    {name} = variable({kind}, value={kind_value(kind, rec[name])})'
                           for name, kind in STORED_VARIABLES.items())
    (tmp / 'check.py').write_text(STORED_CHECK.format(
        units=PERF_UNITS, perf_values=inspect.getsource(perf_values), variables=variables))
    env = {k: v for k, v in os.environ.items() if not k.startswith('RFM_')}
    env.update(RFM_ENABLE_RESULTS_STORAGE='1', RFM_SQLITE_DB_FILE=str(tmp / 'results.db'),
               RFM_PERFLOG_DIR=str(tmp / 'perflogs'), TMPDIR=str(tmp))
    uuids = []
    for steady in STEADY:
        proc = subprocess.run([REFRAME, '-c', tmp / 'check.py', '-r', '-S', f'steady={steady}',
                               '--prefix', tmp / 'rfm'], capture_output=True, text=True,
                              env=env, cwd=tmp)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        uuids += re.findall(r'Current session stored with UUID: (\S+)', proc.stdout)
    return str(tmp / 'results.db'), tmp / 'perflogs/generic/default/TrainingTest.log', uuids


def kind_value(kind, text):
    return text if kind == 'int' else repr(text == 'true') if kind == 'typ.Bool' else repr(text)


def test_results_db_and_perflog_give_the_same_runs(stored):
    db, log, uuids = stored
    from_db = resultsdb.read(db)
    from_log = perflog.read([str(log)])
    assert [r.perf['steady_epoch_time'][0] for r in from_db] == STEADY
    assert [r.perf for r in from_db] == [r.perf for r in from_log]
    assert [r.workload() for r in from_db] == [r.workload() for r in from_log]
    assert from_db[0].workload()['jit_compile'] == 'false'
    assert [r.key(['variant', 'model', 'scale']) for r in from_db] == \
        [('generic:default', 'lrfs', 'smallcnn', 'single')] * 3
    assert [r.session for r in from_db] == uuids and len(set(uuids)) == 3
    assert [r.session for r in resultsdb.read(db, sessions={uuids[1]})] == [uuids[1]]
    assert resultsdb.read(db, ('TrainingTest', 'SizeShapeGap')) == from_db
    assert resultsdb.read(db, 'SizeShapeGap') == []


def test_stored_sessions_come_oldest_first(stored):
    db, _, uuids = stored
    assert resultsdb.session_uuids(db) == uuids


def test_a_missing_results_db_says_how_to_enable_it(tmp_path):
    with pytest.raises(resultsdb.ResultsDBError, match='RFM_ENABLE_RESULTS_STORAGE'):
        resultsdb.read(str(tmp_path / 'none.db'))
    assert not (tmp_path / 'none.db').exists()          # asked about, never made


def test_a_file_that_is_no_results_db_is_one_error_line(tmp_path):
    path = tmp_path / 'results.db'
    path.write_text('not a database\n')
    with pytest.raises(resultsdb.ResultsDBError) as err:
        resultsdb.read(str(path))
    message = str(err.value)
    assert message.startswith(f'cannot read results database {str(path)!r}: '), message
    assert message.endswith('file is not a database') and '\n' not in message, message


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


