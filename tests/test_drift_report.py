"""ssb-references drift (against the history of one workload and payload version) and
report (tables and plots)."""
import math
import os

import pytest

from conftest import REPO
from reference_runs import (STEADY, record, report_markdown,
                            run_cli, runs_of, write_perflog)
from ssb_references.judge import drift
from ssb_references.reffile import propose, reffile, refwrite
from ssb_references.cli import references as cli

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
    rows = {(text.split()[0].split('/')[1], text.split()[1]): text
            for text in out.splitlines() if text.startswith('generic:')}
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


def test_the_trust_benchmarks_leave_one_out_counts_each_value_against_the_others(tmp_path):
    """benchmarks/trust.py's false-alarm rate: 5 unchanged runs of one key, each judged
    against the other 4; one outlier run is flagged on its own figures only."""
    import importlib.util
    spec = importlib.util.spec_from_file_location('trust', os.path.join(REPO, 'benchmarks',
                                                                        'trust.py'))
    trust = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(trust)
    quiet = [0.50, 0.51, 0.49, 0.50, 0.505]
    runs = runs_of([record(s, i) for i, s in enumerate(quiet)], tmp_path)
    judged_per_run = len([n for n in runs[0].perf if drift.rule.policy(n)])
    assert trust.leave_one_out(runs, 0.99) == (0, 5 * judged_per_run)
    runs = runs_of([record(s, i) for i, s in enumerate(quiet[:4] + [0.9])], tmp_path)
    flagged, judged = trust.leave_one_out(runs, 0.99)
    # The 0.9 s run's steady and first epoch times and both rates; the four others, judged
    # against a history that holds it, stay inside its wider interval.
    assert (flagged, judged) == (4, 5 * judged_per_run)


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
    refs = reffile.parse(refwrite.dump(refwrite.build('generic', {kp.key: kp},
                                                    ['variant', 'model', 'scale'])), 'x.yaml')
    assert {r.status for r in drift.drift(refs, [], [])} == {'no runs'}


# -- report --------------------------------------------------------------------------------

def test_report_tables_put_the_variants_side_by_side(tmp_path, capsys, perflog_dir):
    status, md = report_markdown(capsys, perflog_dir, tmp_path)
    assert status == 0
    line = next(text for text in md.splitlines() if 'steady_epoch_time' in text)
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
