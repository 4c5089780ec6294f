"""Files in shared directories that are not what they seem: a FIFO, a socket or a device where
a perflog, a reference file or a results database belongs is one ``error:`` line, never a
hang; a malformed reference entry is one line naming the file, the entry and the field
(docs/hostile-input.md). Real processes with a time limit: a hang fails the test."""
import os
import socket
import subprocess
import sys

import pytest
import yaml

from reference_runs import STEADY, record, write_perflog

BIN = os.path.dirname(sys.executable)
LIMIT_S = 120


def special(path, what):
    """Make ``path`` a FIFO, a socket, or a link to a character device."""
    if what == 'fifo':
        os.mkfifo(path)
    elif what == 'socket':
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
    else:
        os.symlink('/dev/zero', path)
    return {'fifo': 'a FIFO (named pipe)', 'socket': 'a socket',
            'device': 'a character device'}[what]


def cli(name, *args, cwd=None):
    proc = subprocess.run([os.path.join(BIN, name), *map(str, args)], capture_output=True,
                          text=True, timeout=LIMIT_S, cwd=cwd)
    return proc.returncode, proc.stderr


@pytest.fixture
def perflogs(tmp_path):
    recs = [record(s, i) for i, s in enumerate(STEADY)]
    write_perflog(tmp_path / 'perflogs' / 'generic' / 'default' / 'TrainingTest.log', recs)
    return tmp_path / 'perflogs'


@pytest.mark.parametrize('what', ['fifo', 'socket', 'device'])
def test_a_special_reference_file_is_one_error_line(tmp_path, perflogs, what):
    (tmp_path / 'refs').mkdir()
    kind = special(tmp_path / 'refs' / 'generic.yaml', what)
    for command in ('diff', 'drift', 'update'):
        status, err = cli('ssb-references', command, '--perflog-dir', perflogs,
                          '--reference-dir', tmp_path / 'refs')
        assert status == 2 and err == (
            f"ssb-references {command}: error: cannot read reference file "
            f"'{tmp_path}/refs/generic.yaml': {tmp_path}/refs/generic.yaml is {kind}, not a "
            f"regular file: refusing to read it\n"), err


@pytest.mark.parametrize('what', ['fifo', 'socket', 'device'])
def test_a_special_perflog_or_database_is_one_error_line(tmp_path, what):
    kind = special(tmp_path / 'TrainingTest.log', what)
    status, err = cli('ssb-references', 'drift', '--perflog', tmp_path / 'TrainingTest.log')
    assert status == 2 and err == (
        f'ssb-references drift: error: {tmp_path}/TrainingTest.log is {kind}, not a regular '
        f'file: refusing to read it\n')
    status, err = cli('ssb-references', 'drift', '--db', tmp_path / 'TrainingTest.log')
    assert status == 2 and err == (
        f'ssb-references drift: error: {tmp_path}/TrainingTest.log is {kind}, not a regular '
        f'file: refusing to use it\n')


@pytest.mark.parametrize('option, name', [('--db', 'results.db'), ('-C', 'site.py')])
def test_a_fifo_database_or_configuration_of_ssb_acceptance_is_one_error_line(tmp_path, option,
                                                                               name):
    from conftest import REPO
    os.mkfifo(tmp_path / name)
    status, err = cli('ssb-acceptance', '--out', tmp_path / 'out', option, tmp_path / name,
                      cwd=REPO)
    assert status == 2 and err == (
        f'ssb-acceptance: error: {tmp_path}/{name} is a FIFO (named pipe), not a regular '
        f'file: refusing to use it\n')
    assert not (tmp_path / 'out').exists()


ENTRY = 'generic:default/lrfs/smallcnn/single'
MALFORMED = {
    'a string workload': (
        lambda d: d['ssb-references']['entries'][ENTRY].update(workload='epochs=3'),
        f"ssb-references.entries.{ENTRY}.workload: expected a mapping of test variables, "
        f"got 'epochs=3'"),
    'a list where an entry belongs': (
        lambda d: d['ssb-references']['entries'].update({ENTRY: [3]}),
        f'ssb-references.entries.{ENTRY}: expected a mapping (runs, workload, ...), got [3]'),
    'a list of entries': (
        lambda d: d['ssb-references'].update(entries=[ENTRY]),
        f"ssb-references.entries: expected a mapping of entries, got ['{ENTRY}']"),
    'a value no float holds': (
        lambda d: d['TrainingTest']['generic:default']['lrfs']['smallcnn']['single'].update(
            steady_epoch_time=[10**400, None, 0.1, 's']),
        'TrainingTest.generic:default.lrfs.smallcnn.single.steady_epoch_time: the value '
        f"{'1' + '0' * 56}... is not a finite number"),
    'a unit that is not the variable\'s': (
        lambda d: d['TrainingTest']['generic:default']['lrfs']['smallcnn']['single'].update(
            steady_epoch_time=[500.0, None, 0.1, 'ms']),
        "TrainingTest.generic:default.lrfs.smallcnn.single.steady_epoch_time: the unit 'ms' "
        "is not steady_epoch_time's, 's'"),
    'a misspelt variable': (
        lambda d: d['TrainingTest']['generic:default']['lrfs']['smallcnn']['single'].update(
            stedy_epoch_time=[0.5, None, 0.1, 's']),
        "TrainingTest.generic:default.lrfs.smallcnn.single.stedy_epoch_time: no performance "
        "variable 'stedy_epoch_time' in this suite (misspelt? docs/metrics.md lists them)"),
    'a band that overflows': (
        lambda d: d['TrainingTest']['generic:default']['lrfs']['smallcnn']['single'].update(
            steady_epoch_time=[1e308, None, 10, 's']),
        'TrainingTest.generic:default.lrfs.smallcnn.single.steady_epoch_time: the band of '
        '1e+308 with these thresholds overflows: (-inf, inf)'),
}


@pytest.mark.parametrize('case', MALFORMED)
def test_a_malformed_entry_is_one_line_naming_file_entry_and_field(tmp_path, perflogs, case):
    refs = tmp_path / 'refs'
    assert cli('ssb-references', 'update', '--perflog-dir', perflogs, '--reference-dir',
               refs)[0] == 0
    data = yaml.safe_load((refs / 'generic.yaml').read_text())
    spoil, why = MALFORMED[case]
    spoil(data)
    (refs / 'generic.yaml').write_text(yaml.safe_dump(data))
    for command in ('diff', 'drift', 'report'):
        status, err = cli('ssb-references', command, '--perflog-dir', perflogs,
                          '--reference-dir', refs, *(['--no-plots', '--out', tmp_path / 'r']
                                                      if command == 'report' else []))
        assert status == 2 and err == (f"ssb-references {command}: error: malformed reference "
                                       f"file '{refs}/generic.yaml': {why}\n")
