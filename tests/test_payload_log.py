"""The ReFrame-side parser of the payload output, on real and damaged logs."""
import json

import pytest
import reframe.utility.sanity as sn
from reframe.core.exceptions import SanityError

from reframe_tests import payload_log


def epoch(n, images=29, loss=3.0):
    return 'SSB-EPOCH ' + json.dumps({'epoch': n, 'images': images, 'loss': loss, 'seconds': 1.0})


SUMMARY = 'SSB-SUMMARY ' + json.dumps({'steady_epoch_s': 0.5, 'host_peak_rss_bytes': 2**30,
                                       'device_peak_bytes': None,
                                       'versions': {'tensorflow': '2.21.0'}})


@pytest.fixture
def log(tmp_path):
    def write(stdout_lines, stderr_lines=()):
        out, err = tmp_path / 'out', tmp_path / 'err'
        out.write_text('\n'.join(stdout_lines) + '\n')
        err.write_text('\n'.join(stderr_lines) + '\n')
        return str(out), str(err)
    return write


def check(out, err, exitcode=0, epochs=3, images=29):
    return sn.evaluate(payload_log.assert_training_complete(out, err, exitcode, epochs, lambda: images))


def test_complete_log_passes(log):
    out, err = log(['noise', epoch(1), epoch(2), epoch(3), SUMMARY], ['I0000 tf chatter'])
    assert check(out, err)
    assert sn.evaluate(payload_log.summary_value(out, 'steady_epoch_s')) == 0.5
    assert sn.evaluate(payload_log.summary_value(out, 'host_peak_rss_bytes', 2**-20)) == 1024


def test_error_line_is_the_failure_reason(log):
    out, err = log([epoch(1)], ['chatter', "error: corrupt image '/d/7.jpg': truncated JPEG"])
    with pytest.raises(SanityError, match=r"payload failed: error: corrupt image '/d/7.jpg'"):
        check(out, err, exitcode=2)


@pytest.mark.parametrize('lines, exitcode, message', [
    ([epoch(1), epoch(2), SUMMARY], 0, r'expected epochs 1..3'),
    ([epoch(1), epoch(2), epoch(3, loss=float('nan')), SUMMARY], 0, 'loss is nan'),
    ([epoch(1), epoch(2, images=28), epoch(3), SUMMARY], 0, 'trained on 28 images'),
    ([epoch(1), epoch(2), epoch(3)], 0, 'SSB-SUMMARY'),
    ([epoch(1), epoch(2), epoch(3), SUMMARY], -9, 'exited with status -9 without an error line'),
])
def test_incomplete_runs_fail(log, lines, exitcode, message):
    out, err = log(lines)
    with pytest.raises(SanityError, match=message):
        check(out, err, exitcode=exitcode)


def test_missing_value_is_an_error_not_zero(log):
    out, _ = log([SUMMARY])
    with pytest.raises(SanityError, match="no 'device_peak_bytes'"):
        sn.evaluate(payload_log.summary_value(out, 'device_peak_bytes'))
