"""ssb-references on TimeToAccuracy runs: MLPerf's aggregation, references, drift, report."""
import pytest
import yaml

from ssb_references.reffile import propose
from ssb_references.reffile import rule as variables
from reference_runs import T0, report_markdown, run_cli, write_perflog

TTA_UNITS = {'seconds_to_target': 's', 'epochs_to_target': 'epochs',
             'val_accuracy': 'fraction', 'validation_time': 's', 'steady_epoch_time': 's'}


def tta_record(seconds, i=0, variant='lrfs', epochs=6, target='0.5', curve='0.2,0.4,0.55'):
    rec = {'result': 'pass', 'job_completion_time': '2027-01-15T08:00:00',
           'batch_size': '16', 'crop_size': '224', 'dataset': 'synthetic-mame', 'device': 'cpu',
           'environ': 'builtin', 'epochs': '15', 'image_size': '256', 'hrvs_batching': 'single',
           'pixel_budget': '65k', 'job_completion_time_unix': str(T0 + 60 * i),
           'jobid': str(2000 + i), 'model': 'smallcnn', 'partition': 'default',
           'retracing': 'per-shape', 'subset': 'train', 'precision': 'float32',
           'jit_compile': 'false', 'training_step': 'split', 'system': 'generic',
           'tensorflow_version': '2.21.0', 'variant': variant, 'scale': 'single',
           'target_accuracy': target, 'val_subset': 'val', 'val_accuracy_curve': curve,
           'val_time_curve': ','.join(str(1.5 * (n + 1)) for n in range(len(curve.split(','))))}
    values = {'seconds_to_target': seconds, 'epochs_to_target': epochs, 'val_accuracy': 0.55,
              'validation_time': 0.5, 'steady_epoch_time': 0.7}
    for name, value in values.items():
        rec.update({f'{name}_value': str(value), f'{name}_unit': TTA_UNITS[name],
                    f'{name}_ref': '0', f'{name}_lower_thres': 'None',
                    f'{name}_upper_thres': 'None'})
    return rec


# Five runs: MLPerf drops 3.0 and 9.0 and averages the rest to 5.0; their median is 4.5.
SECONDS = [4.0, 9.0, 4.5, 3.0, 6.5]


@pytest.fixture
def tta_perflogs(tmp_path):
    recs = [tta_record(s, i) for i, s in enumerate(SECONDS)]
    recs += [tta_record(3 * s, 10 + i, variant='hrvs', epochs=7) for i, s in enumerate(SECONDS)]
    write_perflog(tmp_path / 'perflogs' / 'generic' / 'default' / 'TimeToAccuracy.log', recs)
    return tmp_path / 'perflogs'


def test_mlperf_drops_the_fastest_and_slowest_and_averages_the_rest():
    assert variables.centre('seconds_to_target', SECONDS) == pytest.approx(5.0)
    assert variables.centre('seconds_to_target', SECONDS, 'median') == 4.5
    assert variables.centre('steady_epoch_time', SECONDS) == 4.5     # not a TTA variable
    with pytest.raises(variables.TooFewRuns, match='needs at least 3, got 2'):
        variables.centre('seconds_to_target', [1.0, 2.0])


def test_proposed_time_to_accuracy_references_use_mlperf(tmp_path, capsys, tta_perflogs):
    status, out, err = run_cli(capsys, 'propose', '--perflog-dir', tta_perflogs,
                               '--reference-dir', tmp_path / 'refs')
    assert status == 0, err
    data = yaml.safe_load(out)
    entry = data['TimeToAccuracy']['generic:default']['lrfs']['smallcnn']['single']
    assert entry['seconds_to_target'][0] == 5.0 and entry['seconds_to_target'][3] == 's'
    assert entry['epochs_to_target'] == [6.0, None, 0.167, 'epochs']   # one epoch more
    meta = data['ssb-references']['entries']['TimeToAccuracy/generic:default/lrfs/smallcnn/single']
    assert meta['workload']['target_accuracy'] == 0.5
    status, out, err = run_cli(capsys, 'propose', '--perflog-dir', tta_perflogs,
                               '--reference-dir', tmp_path / 'refs', '--tta-aggregate', 'median')
    entry = yaml.safe_load(out)['TimeToAccuracy']['generic:default']['lrfs']['smallcnn']['single']
    assert entry['seconds_to_target'][0] == 4.5


def test_too_few_runs_for_mlperf_is_a_note_not_a_reference(tmp_path):
    from ssb_references.runs import perflog
    path = write_perflog(tmp_path / 'TimeToAccuracy.log',
                         [tta_record(s, i) for i, s in enumerate([4.0, 5.0])])
    runs = perflog.read([path], 'TimeToAccuracy')
    proposals, _ = propose.propose(runs, 'generic', min_runs=2)
    (kp,) = proposals.values()
    assert 'seconds_to_target' not in kp.variables and 'steady_epoch_time' in kp.variables
    assert any('MLPerf aggregation' in n and 'needs at least 3, got 2' in n for n in kp.notes)


def test_another_target_is_another_workload(tmp_path, capsys):
    recs = [tta_record(4.0, i) for i in range(3)] + [tta_record(4.0, 5 + i, target='0.7')
                                                    for i in range(3)]
    write_perflog(tmp_path / 'perflogs' / 'generic' / 'default' / 'TimeToAccuracy.log', recs)
    status, _, err = run_cli(capsys, 'propose', '--perflog-dir', tmp_path / 'perflogs',
                             '--reference-dir', tmp_path / 'refs')
    assert status == 2 and 'target_accuracy: 0.5 (2 runs), 0.7 (3 runs)' in err   # newest 5


def test_drift_judges_the_mlperf_score(tmp_path, capsys, tta_perflogs):
    refs = tmp_path / 'refs'
    status = run_cli(capsys, 'update', '--perflog-dir', tta_perflogs, '--reference-dir', refs)[0]
    assert status == 0
    path = tta_perflogs / 'generic' / 'default' / 'TimeToAccuracy.log'
    write_perflog(path, [tta_record(s, i) for i, s in enumerate(SECONDS)] +
                  [tta_record(22.0, 100)])
    status, out, _ = run_cli(capsys, 'drift', '--perflog-dir', tta_perflogs,
                             '--reference-dir', refs)
    assert status == 1
    line = next(text for text in out.splitlines() if 'seconds_to_target' in text)
    # Its history (5 runs): mean 5.4, a 99% prediction interval up to 17.3.
    assert 'regressed' in line and ' 22 s ' in line
    assert 'history 5.4 [' in line and '(99%, n=5)' in line


def test_report_has_a_time_to_accuracy_table_and_curve(tmp_path, capsys, tta_perflogs):
    status, md = report_markdown(capsys, tta_perflogs, tmp_path)
    assert status == 0
    assert '## Time to accuracy (mlperf of the newest 5 runs)' in md
    line = next(text for text in md.splitlines() if 'default/lrfs/smallcnn' in text)
    assert '| 5 | 0.5 | 5 | 6 | 0.20 0.40 0.55 |' in line
    pytest.importorskip('matplotlib')
    status, out, _ = run_cli(capsys, 'report', '--perflog-dir', tta_perflogs,
                             '--reference-dir', tmp_path / 'refs', '--out', tmp_path / 'r')
    png = tmp_path / 'r' / 'generic-accuracy.png'
    assert status == 0 and png.read_bytes()[:4] == b'\x89PNG' and f'wrote {png}' in out
