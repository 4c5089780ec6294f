"""payload/protocol.py: the SSB-EPOCH and SSB-SUMMARY lines, written and read back."""
import io
import json
import math
import sys

import pytest

from payload import protocol


def test_emit_writes_one_tagged_line_with_sorted_keys():
    out = io.StringIO()
    protocol.emit(protocol.EPOCH_TAG, {'loss': 1.5, 'epoch': 2, 'images': 24}, out)
    assert out.getvalue() == 'SSB-EPOCH {"epoch": 2, "images": 24, "loss": 1.5}\n'


def test_emit_defaults_to_stdout(capsys):
    protocol.emit(protocol.SUMMARY_TAG, {'epochs': 3})
    assert capsys.readouterr().out == 'SSB-SUMMARY {"epochs": 3}\n'


def test_what_emit_writes_parse_reads_back():
    record = {'epoch': 1, 'loss': float('nan'), 'device_peak_bytes': None, 'name': 'a b {c}',
              'versions': {'tensorflow': '2.21.0'}, 'shapes': [[40, 56], [64, 48]]}
    out = io.StringIO()
    protocol.emit(protocol.EPOCH_TAG, record, out)
    tag, parsed = protocol.parse(out.getvalue())
    assert tag == protocol.EPOCH_TAG
    assert math.isnan(parsed.pop('loss'))          # a diverged loss stays visible as NaN
    del record['loss']
    assert parsed == record


@pytest.mark.parametrize('line', [
    '',
    '\n',
    'error: something failed',
    'SSB-EPOCH',                                   # no body
    'SSB-EPOCH \n',
    'SSB-EPOCH not json',
    'SSB-EPOCHS {"epoch": 1}',                     # another tag that starts alike
    'ssb-epoch {"epoch": 1}',                      # tags are case-sensitive
    ' SSB-EPOCH {"epoch": 1}',                     # not at the start of the line
    'progress: epoch 1/3, SSB-EPOCH {"epoch": 1}',
])
def test_other_lines_are_not_records(line):
    assert protocol.parse(line) is None


def test_a_record_spread_by_blanks_is_read():
    assert protocol.parse('SSB-SUMMARY   {"epochs": 2}  \n') == ('SSB-SUMMARY', {'epochs': 2})


def test_a_truncated_record_is_an_error_not_a_missing_line():
    # A run killed while printing must not pass for one that printed nothing.
    with pytest.raises(json.JSONDecodeError):
        protocol.parse('SSB-SUMMARY {"epochs": 2, "images_per')


def test_read_keeps_one_tag_in_file_order(tmp_path):
    path = tmp_path / 'out.log'
    path.write_bytes(b'starting\n'
                     b'SSB-EPOCH {"epoch": 1}\n'
                     b'\xff\xfe not UTF-8 from a library\n'
                     b'SSB-EPOCH {"epoch": 2}\n'
                     b'SSB-SUMMARY {"epochs": 2}\n'
                     b'SSB-EPOCH {"epoch": 3}')                 # no final newline
    assert protocol.read(str(path), protocol.EPOCH_TAG) == [{'epoch': 1}, {'epoch': 2},
                                                            {'epoch': 3}]
    assert protocol.read(str(path), protocol.SUMMARY_TAG) == [{'epochs': 2}]


def test_worker_files_are_named_by_index(tmp_path):
    assert protocol.worker_file(str(tmp_path), 3) == str(tmp_path / 'ssb-worker-3.log')
    assert protocol.worker_file('d', '*') == 'd/ssb-worker-*.log'       # the reader's glob


def test_worker_zero_writes_to_stdout_the_others_to_their_file(tmp_path):
    assert protocol.worker_records(str(tmp_path), 0) is sys.stdout
    assert list(tmp_path.iterdir()) == []
    with protocol.worker_records(str(tmp_path), 2) as out:
        protocol.emit(protocol.SUMMARY_TAG, {'worker': 2}, out)
    assert protocol.read(protocol.worker_file(str(tmp_path), 2), protocol.SUMMARY_TAG) == \
        [{'worker': 2}]
    assert [p.name for p in tmp_path.iterdir()] == ['ssb-worker-2.log']
