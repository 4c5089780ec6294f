"""A bad perflog line costs that line, not the file: ReFrame keeps appending to the same file,
so one torn line (a killed writer) refused its whole history (docs/hostile-input.md)."""
import pytest

from reference_runs import STEADY, record, run_cli, write_perflog
from ssb_references.runs import notices, perflog


@pytest.fixture
def log(tmp_path):
    """A perflog of system 'generic' with three good runs."""
    return tmp_path / 'perflogs' / 'generic' / 'default' / 'TrainingTest.log'


def good_lines(log):
    write_perflog(log, [record(s, i) for i, s in enumerate(STEADY)])
    return log.read_bytes()


def test_a_torn_last_line_is_skipped_with_one_warning(log, capsys):
    text = good_lines(log)
    torn = text.splitlines()[-1][:40]
    log.write_bytes(text + torn)                          # a writer killed mid-line
    status, out, err = run_cli(capsys, 'drift', '--perflog', log, '--all')
    assert status == 0 and '0 of 9 value(s) drifted' in out
    assert err == (f'warning: {log}:5: skipped: a line without its end (a writer killed '
                   f'mid-line?)\n')
    log.write_bytes(text + torn + b'\n')                  # then ReFrame appended to it
    status, out, err = run_cli(capsys, 'drift', '--perflog', log, '--all')
    assert status == 0 and '0 of 9 value(s) drifted' in out
    assert err.startswith(f'warning: {log}:5: skipped: ') and 'fields, the header has' in err
    assert err.count('\n') == 1


@pytest.mark.parametrize('line, why', [
    (b'pass|x|y\n', '3 fields, the header has'),
    (b'\xff\xfe|garbage\n', 'not UTF-8 text (invalid start byte at byte 0)'),
])
def test_a_malformed_line_in_the_middle_costs_that_line(log, capsys, line, why):
    text = good_lines(log).splitlines(keepends=True)
    log.write_bytes(b''.join(text[:2] + [line] + text[2:]))
    runs = perflog.read([str(log)])
    assert len(runs) == 3
    err = capsys.readouterr().err
    assert err.startswith(f'warning: {log}:3: skipped: ') and why in err
    assert err.count('\n') == 1


def test_a_carriage_return_in_a_value_does_not_split_the_record(log):
    write_perflog(log, [record(s, i, environ='built\rin') for i, s in enumerate(STEADY)])
    assert [r.environ for r in perflog.read([str(log)])] == ['built\rin'] * 3


def test_a_record_without_completion_time_and_one_before_the_header_are_skipped(log, capsys):
    text = good_lines(log).splitlines(keepends=True)
    header = text[0].decode().rstrip('\n').split('|')
    fields = text[1].decode().rstrip('\n').split('|')
    fields[header.index('job_completion_time_unix')] = 'nan'
    fields[header.index('job_completion_time')] = 'soon'
    log.write_bytes(text[1] + b''.join(text) + '|'.join(fields).encode() + b'\n')
    assert len(perflog.read([str(log)])) == 3
    assert capsys.readouterr().err == (
        f'warning: {log}:1: skipped: a record before any header line\n'
        f'warning: {log}:6: skipped: a record without a job completion time\n')


def test_many_bad_lines_are_a_few_warnings_and_a_count(log, capsys):
    text = good_lines(log)
    log.write_bytes(text + b'pass|x\n' * 12)
    assert len(perflog.read([str(log)])) == 3
    err = capsys.readouterr().err.splitlines()
    assert len(err) == notices.MAX_PER_FILE + 1
    assert err[-1] == f'warning: {log}: {12 - notices.MAX_PER_FILE} more bad line(s) skipped'


def test_a_file_without_any_header_is_still_refused(log):
    log.parent.mkdir(parents=True)
    log.write_text('pass|2027-01-15T08:00:00\n')
    with pytest.raises(perflog.PerflogError, match='before any header'):
        perflog.read([str(log)])
