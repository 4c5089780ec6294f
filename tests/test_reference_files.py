"""Reference files: written, merged, kept in history, refused when malformed; and the tests'
hook that points ReFrame at them for one workload only."""
import os
import subprocess

import pytest
import yaml
from reframe.core.exceptions import ReferenceParseError

from conftest import stand_in_test
from reference_runs import (SYNTH, record, run_cli, runs_of, write_perflog)
from reframe_tests import references as test_references
from ssb_references.reffile import propose, reffile, refwrite

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
        refwrite.write(str(path), 'TrainingTest: [')
    assert path.read_text() == 'TrainingTest: {}\n'
    assert sorted(os.listdir(tmp_path)) == ['generic.yaml']     # no temporary, no history


def test_diff_shows_old_and_new_side_by_side(tmp_path, capsys, perflog_dir):
    refs = tmp_path / 'refs'
    status, out, _ = run_cli(capsys, 'diff', '--perflog-dir', perflog_dir, '--reference-dir', refs)
    assert status == 0 and 'no file yet' in out and not refs.exists()
    line = next(text for text in out.splitlines() if 'lrfs' in text and 'steady_epoch_time' in text)
    assert '0.5 s [-, 0.55]' in line and ' new ' in line and '3: 0.49..0.51' in line
    run_cli(capsys, 'update', '--perflog-dir', perflog_dir, '--reference-dir', refs)
    status, out, _ = run_cli(capsys, 'diff', '--perflog-dir', perflog_dir, '--reference-dir', refs)
    assert all(' same ' in text for text in out.splitlines()[3:] if text.strip())


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
    return stand_in_test('TrainingTest', 'TrainingTest %variant=lrfs', **values)


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


