"""ssb_references (statistics, files, refusals, drift, reports) and the tests' reference hook."""
import logging
import math
import os
import re
import subprocess
import types

import pytest
import yaml
from reframe.core.exceptions import ReferenceParseError

from reframe_tests import references as test_references
from ssb_references import cli, drift, perflog, propose, reffile, resultsdb

T0 = 1_800_000_000.0
SYNTH = 'synthetic-mame images_per_class=2 val_per_class=1 scale=0.05 seed=0'

# steady epoch time per run; the other variables follow from it.
PERF_UNITS = {'steady_epoch_time': 's', 'first_epoch_time': 's', 'first_epoch_overhead': 's',
              'throughput': 'img/s', 'pixel_throughput': 'Mpx/s', 'host_peak_memory': 'MiB',
              'input_wait_fraction': 'fraction', 'distinct_shapes': 'shapes',
              'traced_graphs': 'graphs'}


def perf_values(steady, variant='lrfs', memory=650.0):
    shapes = 2 if variant == 'lrfs' else 58
    return {'steady_epoch_time': steady, 'first_epoch_time': steady + 1.0,
            'first_epoch_overhead': 1.0, 'throughput': 58 / steady,
            'pixel_throughput': 1.5 / steady, 'host_peak_memory': memory,
            'input_wait_fraction': 0.02, 'distinct_shapes': shapes, 'traced_graphs': shapes}


def record(steady, i=0, variant='lrfs', system='generic', partition='default', tf='2.21.0',
           epochs=3, environ='builtin', scale='single', result='pass', precision='float32',
           **perf):
    """One perflog record as ReFrame's builtin filelog format writes it (text fields)."""
    values = perf_values(steady, variant)
    values.update(perf)
    rec = {'result': result, 'job_completion_time': '2027-01-15T08:00:00',
           'batch_size': '16' if variant == 'lrfs' else '1', 'crop_size': '224',
           'dataset': SYNTH, 'device': 'cpu', 'environ': environ, 'epochs': str(epochs),
           'hrvs_batching': 'single', 'image_size': '256',
           'job_completion_time_unix': str(T0 + 60 * i), 'job_nodelist': 'node01',
           'jobid': str(1000 + i), 'model': 'smallcnn', 'partition': partition,
           'pixel_budget': '65k', 'retracing': 'per-shape', 'subset': 'train',
           'precision': precision, 'jit_compile': 'false', 'training_step': 'split',
           'system': system, 'tensorflow_version': tf, 'variant': variant}
    if scale is not None:
        rec['scale'] = scale
    for name, value in values.items():
        rec.update({f'{name}_value': str(value), f'{name}_unit': PERF_UNITS[name],
                    f'{name}_ref': '0', f'{name}_lower_thres': 'None',
                    f'{name}_upper_thres': 'None'})
    return rec


def write_perflog(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    lines, header = [], None
    for rec in records:
        if list(rec) != header:
            header = list(rec)
            lines.append('|'.join(header))
        lines.append('|'.join(rec[k] for k in header))
    path.write_text('\n'.join(lines) + '\n')
    return str(path)


def runs_of(records, tmp_path, name='TrainingTest.log'):
    return perflog.read([write_perflog(tmp_path / name, records)])


STEADY = [0.50, 0.51, 0.49]


@pytest.fixture
def perflog_dir(tmp_path):
    """perflogs/generic/default/TrainingTest.log with 3 LR&FS and 3 HR&VS runs."""
    recs = [record(s, i) for i, s in enumerate(STEADY)]
    recs += [record(2 * s, 10 + i, variant='hrvs') for i, s in enumerate(STEADY)]
    write_perflog(tmp_path / 'perflogs' / 'generic' / 'default' / 'TrainingTest.log', recs)
    return tmp_path / 'perflogs'


def run_cli(capsys, *args):
    status = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def report_markdown(capsys, perflog_dir, tmp_path):
    """`ssb-references report --no-plots` of these perflogs: its status and markdown."""
    status, _, _ = run_cli(capsys, 'report', '--perflog-dir', perflog_dir,
                           '--reference-dir', tmp_path / 'refs', '--out', tmp_path / 'r',
                           '--no-plots')
    return status, (tmp_path / 'r' / 'generic-summary.md').read_text()


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


# -- reference files -----------------------------------------------------------------------

def test_update_writes_a_reference_file_reframe_and_the_tests_can_read(tmp_path, capsys,
                                                                      perflog_dir):
    refs = tmp_path / 'refs'
    status, out, _ = run_cli(capsys, 'update', '--perflog-dir', perflog_dir,
                             '--reference-dir', refs)
    assert status == 0 and f'wrote {refs / "generic.yaml"}' in out
    data = yaml.safe_load((refs / 'generic.yaml').read_text())
    tree = data['TrainingTest']
    assert tree['$index'] == ['$partition', 'variant', 'model', 'scale']
    entry = tree['generic:default']['lrfs']['smallcnn']['single']
    assert entry['steady_epoch_time'] == [0.5, None, 0.1, 's']
    assert entry['distinct_shapes'][0] == 2 and entry['throughput'][2] is None
    assert tree['generic:default']['hrvs']['smallcnn']['single']['steady_epoch_time'][0] == 1.0
    meta = data['ssb-references']['entries']['generic:default/lrfs/smallcnn/single']
    assert meta['runs'] == 3 and meta['workload']['epochs'] == 3
    assert meta['workload']['dataset'] == SYNTH and meta['tensorflow_version'] == '2.21.0'
    # The tests' own reader accepts it; so does the tool's.
    assert test_references.load(str(refs / 'generic.yaml'), 'TrainingTest').index == \
        tree['$index']
    loaded = reffile.load(str(refs / 'generic.yaml'))
    assert loaded.entries[('generic:default', 'lrfs', 'smallcnn', 'single')] == entry


REFERENCED_CHECK = """
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import performance_function, sanity_function, variable


@rfm.simple_test
class TrainingTest(rfm.RunOnlyRegressionTest):
    \"\"\"The index attributes of the suite's TrainingTest, and its references as its hook
    gives them: the system's file under ReFrame's reference prefix.\"\"\"
    valid_systems = ['*']
    valid_prog_environs = ['*']
    executable = 'true'
    variant = variable(str, value='hrvs')
    model = variable(str, value='smallcnn')
    scale = variable(str, value='single')
    reference = {'$ref': 'refs/generic.yaml'}

    @sanity_function
    def ran(self):
        return sn.assert_eq(self.job.exitcode, 0)

    @performance_function('s')
    def steady_epoch_time(self):
        return 1.0
"""


def test_reframe_resolves_the_written_file(tmp_path, capsys, perflog_dir):
    """ReFrame's own $ref reader and $index lookup on the file ``update`` wrote: a run's
    perflog carries the reference and bounds of its entry."""
    from reframe_runs import REFRAME, read_perflog
    run_cli(capsys, 'update', '--perflog-dir', perflog_dir, '--reference-dir', tmp_path / 'refs')
    (tmp_path / 'check.py').write_text(REFERENCED_CHECK)
    env = {k: v for k, v in os.environ.items() if not k.startswith('RFM_')}
    env.update(RFM_REFERENCE_PREFIX=str(tmp_path), RFM_PERFLOG_DIR=str(tmp_path / 'perflogs'),
               TMPDIR=str(tmp_path))
    proc = subprocess.run([REFRAME, '-c', tmp_path / 'check.py', '-r', '--prefix',
                           tmp_path / 'rfm'], capture_output=True, text=True, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (rec,) = read_perflog(tmp_path / 'perflogs/generic/default/TrainingTest.log')
    assert (rec['steady_epoch_time_value'], rec['steady_epoch_time_ref'],
            rec['steady_epoch_time_lower_thres'], rec['steady_epoch_time_upper_thres'],
            rec['steady_epoch_time_unit']) == ('1.0', '1.0', 'None', '0.1', 's')


def test_update_keeps_the_previous_file_in_history_and_merges(tmp_path, capsys, perflog_dir):
    refs = tmp_path / 'refs'
    run_cli(capsys, 'update', '--perflog-dir', perflog_dir, '--reference-dir', refs)
    first = (refs / 'generic.yaml').read_text()
    # Three newer, slower LR&FS runs only: HR&VS keeps its entry.
    newer = [record(1.0, 100 + i) for i in range(3)]
    write_perflog(tmp_path / 'new' / 'generic' / 'default' / 'TrainingTest.log', newer)
    status, out, _ = run_cli(capsys, 'update', '--perflog-dir', tmp_path / 'new',
                             '--reference-dir', refs)
    assert status == 0 and 'previous references kept as' in out
    (saved,) = (refs / 'history').iterdir()
    assert saved.read_text() == first and saved.name.startswith('generic.')
    tree = yaml.safe_load((refs / 'generic.yaml').read_text())['TrainingTest']['generic:default']
    assert tree['lrfs']['smallcnn']['single']['steady_epoch_time'][0] == 1.0
    assert tree['hrvs']['smallcnn']['single']['steady_epoch_time'][0] == 1.0   # kept
    assert 'kept' in out and '+100.0%' in out
    run_cli(capsys, 'update', '--perflog-dir', tmp_path / 'new', '--reference-dir', refs,
            '--replace')
    tree = yaml.safe_load((refs / 'generic.yaml').read_text())['TrainingTest']['generic:default']
    assert list(tree) == ['lrfs']
    assert len(list((refs / 'history').iterdir())) == 2


def test_update_refuses_to_replace_a_linked_file(tmp_path, capsys, perflog_dir):
    refs, shared = tmp_path / 'refs', tmp_path / 'shared.yaml'
    refs.mkdir()
    shared.write_text('TrainingTest: {}\n')
    (refs / 'generic.yaml').symlink_to(shared)
    status, _, err = run_cli(capsys, 'update', '--perflog-dir', perflog_dir,
                             '--reference-dir', refs)
    assert status == 2
    assert err.strip().splitlines()[-1] == (
        f"ssb-references update: error: '{refs / 'generic.yaml'}' is a symbolic link (to "
        f"'{shared}'); refusing to replace it: write to its target, or remove the link")
    assert os.readlink(refs / 'generic.yaml') == str(shared)
    assert shared.read_text() == 'TrainingTest: {}\n' and sorted(os.listdir(refs)) == [
        'generic.yaml']


def test_a_reference_file_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / 'generic.yaml'
    path.write_bytes(b'TrainingTest: {\xff}\n')
    with pytest.raises(reffile.RefFileError, match=f"cannot read reference file '{path}': "
                                                     "'utf-8' codec can't decode"):
        reffile.load(str(path))


def test_write_is_atomic_and_refuses_unreadable_text(tmp_path):
    path = tmp_path / 'generic.yaml'
    path.write_text('TrainingTest: {}\n')
    with pytest.raises(reffile.RefFileError, match='malformed'):
        reffile.write(str(path), 'TrainingTest: [')
    assert path.read_text() == 'TrainingTest: {}\n'
    assert sorted(os.listdir(tmp_path)) == ['generic.yaml']     # no temporary, no history


def test_diff_shows_old_and_new_side_by_side(tmp_path, capsys, perflog_dir):
    refs = tmp_path / 'refs'
    status, out, _ = run_cli(capsys, 'diff', '--perflog-dir', perflog_dir, '--reference-dir', refs)
    assert status == 0 and 'no file yet' in out and not refs.exists()
    line = next(l for l in out.splitlines() if 'lrfs' in l and 'steady_epoch_time' in l)
    assert '0.5 s [-, 0.55]' in line and ' new ' in line and '3: 0.49..0.51' in line
    run_cli(capsys, 'update', '--perflog-dir', perflog_dir, '--reference-dir', refs)
    status, out, _ = run_cli(capsys, 'diff', '--perflog-dir', perflog_dir, '--reference-dir', refs)
    assert all(' same ' in l for l in out.splitlines()[3:] if l.strip())


@pytest.mark.parametrize('text, message', [
    ('TrainingTest: [\n', 'not valid YAML'),
    ('', 'the file is empty'),
    ('- a\n- b\n', 'expected a mapping of test names'),
    ('TrainingTest:\n  $index: [$partition, variant]\n  "g:d":\n    lrfs:\n'
     '      steady_epoch_time: [1.0, 0.1, 0.2, s]\n', 'low threshold value: 0.1'),
    ('TrainingTest:\n  $index: [$partition, variant]\n  "g:d":\n    lrfs:\n'
     '      steady_epoch_time: fast\n', "TrainingTest.g:d.lrfs.steady_epoch_time"),
    ('TrainingTest:\n  $index: [$partition, variant]\n  "g:d": [1, 2]\n',
     'one level per \\$index key'),
    # PyYAML keeps the last of two equal keys: a pasted entry silently replaced the first.
    ('TrainingTest:\n  $index: [$partition, variant]\n  "g:d":\n    lrfs:\n'
     '      steady_epoch_time: [1.0, -0.1, 0.2, s]\n    lrfs:\n'
     '      steady_epoch_time: [9.0, -0.1, 0.2, s]\n',
     r"line 6, column 5: duplicate key 'lrfs' \(first on line 4\)"),
])
def test_malformed_files_are_named_to_the_tool_and_the_tests(tmp_path, capsys, text, message):
    path = tmp_path / 'generic.yaml'
    path.write_text(text)
    with pytest.raises(reffile.RefFileError, match=message) as tool_err:
        reffile.load(str(path))
    with pytest.raises(ReferenceParseError, match=message) as test_err:
        test_references.load(str(path), 'TrainingTest')
    for err in (tool_err, test_err):
        assert f"malformed reference file '{path}'" in str(err.value)


def test_cli_names_a_malformed_file(tmp_path, capsys, perflog_dir):
    refs = tmp_path / 'refs'
    refs.mkdir()
    (refs / 'generic.yaml').write_text('TrainingTest: [\n')
    status, _, err = run_cli(capsys, 'update', '--perflog-dir', perflog_dir,
                             '--reference-dir', refs)
    assert status == 2 and f"malformed reference file '{refs / 'generic.yaml'}'" in err
    assert (refs / 'generic.yaml').read_text() == 'TrainingTest: [\n'


# -- the tests' hook -----------------------------------------------------------------------

def fake_test(epochs=3, **attrs):
    """What references.for_test reads of a TrainingTest."""
    values = dict(variant='lrfs', model='smallcnn', scale='single', epochs=epochs,
                  dataset=SYNTH, batch_size=16, subset='train', retracing='per-shape',
                  image_size=256, crop_size=224, precision='float32', jit_compile=False,
                  training_step='split')
    values.update(attrs)
    test = type('TrainingTest', (), values)()
    test.current_system = types.SimpleNamespace(name='generic')
    test.current_partition = types.SimpleNamespace(fullname='generic:default')
    test.current_environ = types.SimpleNamespace(name='builtin')
    test.display_name = 'TrainingTest %variant=lrfs'
    test.logger = logging.getLogger('size-shape-bench.test')       # as ReFrame's test.logger
    return test


def test_hook_points_at_the_system_file_only_for_its_workload(tmp_path, capsys, perflog_dir,
                                                               monkeypatch, caplog):
    refs = tmp_path / 'references'
    monkeypatch.setattr(test_references, 'reference_prefix', lambda test: str(tmp_path))
    assert test_references.for_test(fake_test()) is None            # no file: no references
    run_cli(capsys, 'update', '--perflog-dir', perflog_dir, '--reference-dir', refs)
    # ReFrame resolves the file under its reference prefix.
    assert test_references.for_test(fake_test()) == {'$ref': 'references/generic.yaml'}
    assert test_references.for_test(fake_test(epochs=5)) is None    # another workload
    assert 'it is for another workload: epochs=5 (references: 3)' in caplog.text
    # Precision, XLA and the step kind are part of the workload: a bfloat16 run is not held
    # to float32 references.
    assert test_references.for_test(fake_test(precision='mixed_bfloat16')) is None
    assert test_references.for_test(fake_test(jit_compile=True)) is None
    assert test_references.for_test(fake_test(training_step='fused')) is None


def test_propose_refuses_to_mix_payload_series(tmp_path):
    records = [record(1.0 + 0.01 * i, i) for i in range(4)]
    for i, rec in enumerate(records):
        rec['payload_version'] = '1.0.3' if i < 2 else '1.1.0'
    runs = runs_of(records, tmp_path)
    with pytest.raises(propose.Refusal, match=r'runs mix payload versions 1\.0, 1\.1'):
        propose.propose(runs, 'generic')
    proposals, _ = propose.propose(runs, 'generic', allow_mixed_versions=True)
    (kp,) = proposals.values()
    assert kp.meta()['payload_version'] == ['1.0.3', '1.1.0']
    same = runs_of([dict(r, payload_version='1.0.3') for r in records], tmp_path, 'same.log')
    (kp,) = propose.propose(same, 'generic')[0].values()
    assert kp.meta()['payload_version'] == '1.0.3'


def test_propose_refuses_to_mix_precisions(tmp_path):
    records = [record(1.0 + 0.01 * i, i, precision='float32' if i < 2 else 'mixed_bfloat16')
               for i in range(4)]
    runs = runs_of(records, tmp_path)
    with pytest.raises(propose.Refusal, match='precision'):
        propose.propose(runs, 'generic')


def test_hook_rejects_an_index_the_test_cannot_answer(tmp_path, monkeypatch):
    monkeypatch.setattr(test_references, 'reference_prefix', lambda test: str(tmp_path))
    (tmp_path / 'references').mkdir()
    (tmp_path / 'references' / 'generic.yaml').write_text(
        'TrainingTest:\n  $index: [$partition, nodes]\n  "generic:default":\n    "2":\n'
        '      steady_epoch_time: [1.0, null, 0.1, s]\n')
    with pytest.raises(ReferenceParseError, match="\\$index key 'nodes' is not an attribute"):
        test_references.for_test(fake_test())


# -- drift ---------------------------------------------------------------------------------

def test_drift_judges_the_newest_run_against_its_history(tmp_path, capsys, perflog_dir):
    refs = tmp_path / 'refs'
    run_cli(capsys, 'update', '--perflog-dir', perflog_dir, '--reference-dir', refs)
    # Two earlier runs per key: too little history, so the references judge, and it says so.
    status, out, _ = run_cli(capsys, 'drift', '--perflog-dir', perflog_dir,
                             '--reference-dir', refs)
    assert status == 0 and '0 of 18 value(s) drifted' in out
    assert '0 judged against their history' in out and '18 against the references' in out
    # Then LR&FS got 30% slower, HR&VS twice as fast, with another shape count: one run each,
    # judged against the three before it.
    log = perflog_dir / 'generic' / 'default' / 'TrainingTest.log'
    write_perflog(log, [record(s, i) for i, s in enumerate(STEADY)] +
                  [record(2 * s, 10 + i, variant='hrvs') for i, s in enumerate(STEADY)] +
                  [record(0.65, 50), record(0.5, 60, variant='hrvs', distinct_shapes=57)])
    status, out, _ = run_cli(capsys, 'drift', '--perflog-dir', perflog_dir,
                             '--reference-dir', refs)
    assert status == 1
    rows = {(l.split()[0].split('/')[1], l.split()[1]): l
            for l in out.splitlines() if l.startswith('generic:')}
    assert ' regressed' in rows[('lrfs', 'steady_epoch_time')]
    # Each verdict line: the value, the history's mean and interval, n and the confidence.
    # 0.5 +- t(0.995, 2) 9.925 x s 0.01 x sqrt(1 + 1/3): 0.5 +- 0.1146
    line = rows[('lrfs', 'steady_epoch_time')]
    assert ' 0.65 s ' in line and 'history 0.5 [0.3854, 0.6146] (99%, n=3)' in line
    assert ' regressed' in rows[('lrfs', 'throughput')]
    assert ' improved' in rows[('hrvs', 'steady_epoch_time')]
    assert ' changed' in rows[('hrvs', 'distinct_shapes')]
    assert ('lrfs', 'host_peak_memory') not in rows                 # only drifted rows
    assert '18 judged against their history at 99% confidence' in out


def test_drift_needs_the_change_to_matter_as_well_as_to_be_unlikely(tmp_path):
    """A quiet history gives a narrow interval: a 2% change leaves it, but stays under the
    steady epoch time's 10% floor and is not flagged; a 20% one is."""
    quiet = [0.500, 0.501, 0.499, 0.500]
    for steady, status in ((0.51, 'ok'), (0.60, 'regressed')):
        runs = runs_of([record(s, i) for i, s in enumerate(quiet + [steady])], tmp_path)
        verdicts = {v.variable: v for v in drift.drift(None, runs, ['variant', 'model'])}
        assert not verdicts['steady_epoch_time'].interval.contains(0.51)
        assert verdicts['steady_epoch_time'].status == status


def test_drift_never_mixes_payload_versions_or_workloads(tmp_path, capsys, perflog_dir):
    refs = tmp_path / 'refs'
    run_cli(capsys, 'update', '--perflog-dir', perflog_dir, '--reference-dir', refs)

    def versioned(rec, version):
        rec['payload_version'] = version
        return rec

    old = [versioned(record(0.5, 20 + i), '1.1.0') for i in range(3)]
    other = [versioned(record(0.5, 30 + i, epochs=1), '1.2.0') for i in range(3)]
    new = versioned(record(0.9, 40), '1.2.1')           # a patch release: the same series
    runs = runs_of(old + other + [new], tmp_path)
    (lrfs_run,) = [r for r in runs if r.time == max(r.time for r in runs)]
    history, left_out = drift.history_of(lrfs_run, runs, ['variant', 'model'])
    assert history == [] and left_out == '3 of payload 1.1, not 1.2, 3 of another workload'
    verdicts = drift.judge_run(lrfs_run, runs, ['variant', 'model'],
                               reffile.load(refs / 'generic.yaml'))
    steady = next(v for v in verdicts if v.variable == 'steady_epoch_time')
    assert steady.basis == 'references' and steady.status == 'regressed'
    assert steady.note.startswith('0 earlier run(s) of this workload and payload series, '
                                  '3 needed for history; left out 3 of payload 1.1')


def test_drift_options_are_checked(tmp_path, capsys, perflog_dir):
    for option, value in (('--confidence', '1'), ('--confidence', 'nan'), ('--history', '2')):
        with pytest.raises(SystemExit) as exc:
            cli.main(['drift', '--perflog-dir', str(perflog_dir), option, value])
        assert exc.value.code == 2 and f'argument {option}' in capsys.readouterr().err


def test_a_reference_without_runs_is_reported(tmp_path):
    runs = runs_of([record(0.5, i) for i in range(3)], tmp_path)
    (kp,) = propose.propose(runs, 'generic')[0].values()
    refs = reffile.parse(reffile.dump(reffile.build('generic', {kp.key: kp},
                                                    ['variant', 'model', 'scale'])), 'x.yaml')
    assert {r.status for r in drift.drift(refs, [], [])} == {'no runs'}


# -- report --------------------------------------------------------------------------------

def test_report_tables_put_the_variants_side_by_side(tmp_path, capsys, perflog_dir):
    status, md = report_markdown(capsys, perflog_dir, tmp_path)
    assert status == 0
    line = next(l for l in md.splitlines() if 'steady_epoch_time' in l)
    assert '| 0.5 (n=3) | 1 (n=3) | 2.00x |' in line
    assert (tmp_path / 'r' / 'generic-summary.csv').exists()
    assert not list((tmp_path / 'r').glob('*.png'))


def test_report_draws_pngs_with_the_reference_band(tmp_path, capsys, perflog_dir):
    pytest.importorskip('matplotlib')
    refs = tmp_path / 'refs'
    run_cli(capsys, 'update', '--perflog-dir', perflog_dir, '--reference-dir', refs)
    status, out, _ = run_cli(capsys, 'report', '--perflog-dir', perflog_dir,
                             '--reference-dir', refs, '--out', tmp_path / 'r')
    assert status == 0
    for name in ('generic-lrfs-vs-hrvs.png', 'generic-trend.png'):
        png = tmp_path / 'r' / name
        assert png.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n' and png.stat().st_size > 10_000
        assert f'wrote {png}' in out


def test_report_without_matplotlib_says_what_to_install(tmp_path, capsys, perflog_dir,
                                                         monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith('matplotlib'):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, '__import__', no_matplotlib)
    status, _, err = run_cli(capsys, 'report', '--perflog-dir', perflog_dir,
                             '--reference-dir', tmp_path / 'refs', '--out', tmp_path / 'r')
    assert status == 2 and "pip install 'size-shape-bench[report]'" in err


def test_bounds_are_reframes():
    assert reffile.band(2.0, -0.25, 0.25) == (1.5, 2.5)
    assert reffile.band(0.0, None, 0.05) == (-math.inf, 0.05)     # absolute for a value of 0
    assert math.isinf(reffile.band(1.0, None, None)[0])
