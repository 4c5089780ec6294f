"""The ReFrame-side parser of the payload output, on complete and damaged logs."""
import json

import pytest
import reframe.utility.sanity as sn
from reframe.core.exceptions import SanityError

from reframe_tests import payload_log


def epoch(n, images=29, loss=3.0, worker=0, steps=29):
    return 'SSB-EPOCH ' + json.dumps({'epoch': n, 'images': images, 'loss': loss,
                                      'seconds': 1.0, 'worker': worker, 'steps': steps})


def summary(worker=0, left_out=0, steps=29, host='node1'):
    return 'SSB-SUMMARY ' + json.dumps({
        'worker': worker, 'host': host, 'steady_epoch_s': 0.5, 'host_peak_rss_bytes': 2**30,
        'device_peak_bytes': None, 'dataset_images': 29, 'images_left_out': left_out,
        'steps_per_epoch': steps, 'versions': {'tensorflow': '2.21.0'}})


SUMMARY = summary()


@pytest.fixture
def log(tmp_path):
    def write(stdout_lines, stderr_lines=()):
        out, err = tmp_path / 'out', tmp_path / 'err'
        out.write_text('\n'.join(stdout_lines) + '\n')
        err.write_text('\n'.join(stderr_lines) + '\n')
        return str(out), str(err)
    return write


def check(out, err, exitcode=0, epochs=3, images=29, workers=1, nodes=None):
    return sn.evaluate(payload_log.assert_training_complete(
        out, err, exitcode, epochs, lambda: images, workers, nodes=nodes))


def test_complete_log_passes(log):
    out, err = log(['noise', epoch(1), epoch(2), epoch(3), SUMMARY], ['I0000 tf chatter'])
    assert check(out, err)
    assert sn.evaluate(payload_log.summary_value(out, 'steady_epoch_s')) == 0.5
    assert sn.evaluate(payload_log.summary_value(out, 'host_peak_rss_bytes', 2**-20)) == 1024


def test_two_workers_each_with_its_records(log, tmp_path):
    out, err = log([epoch(n, images=28, steps=14) for n in (1, 2, 3)] +
                   [summary(0, left_out=1, steps=14)])
    (tmp_path / 'ssb-worker-1.log').write_text('\n'.join(
        [epoch(n, images=28, steps=14, worker=1) for n in (1, 2, 3)] +
        [summary(1, left_out=1, steps=14)]) + '\n')
    assert check(out, err, workers=2)
    assert sn.evaluate(payload_log.summary(out))['worker'] == 0


def two_workers(log, tmp_path, hosts):
    out, err = log([epoch(n, images=28, steps=14) for n in (1, 2, 3)] +
                   [summary(0, left_out=1, steps=14, host=hosts[0])])
    (tmp_path / 'ssb-worker-1.log').write_text('\n'.join(
        [epoch(n, images=28, steps=14, worker=1) for n in (1, 2, 3)] +
        [summary(1, left_out=1, steps=14, host=hosts[1])]) + '\n')
    return out, err


def test_each_worker_on_a_node_of_its_own(log, tmp_path):
    assert check(*two_workers(log, tmp_path, ['node1', 'node2']), workers=2, nodes=2)
    with pytest.raises(SanityError, match=r'the job ran on 2 node\(s\), but its workers '
                                          r'reported 1 host name\(s\): worker 0 on node1, '
                                          r'worker 1 on node1'):
        check(*two_workers(log, tmp_path, ['node1', 'node1']), workers=2, nodes=2)
    with pytest.raises(SanityError, match=r'workers \[1\] reported no host name'):
        check(*two_workers(log, tmp_path, ['node1', '']), workers=2, nodes=2)


def test_srun_names_the_node_of_a_killed_task(log):
    srun = ['srun: error: node2: task 1: Killed', 'srun: error: node1: task 0: Exited with '
            'exit code 1']
    out, err = log([epoch(1)], ['error: worker 0 of 2: another worker died', *srun])
    with pytest.raises(SanityError, match=r'^payload failed: error: worker 0 of 2: another '
                                          r'worker died \(srun: task 1 on node2: Killed\)$'):
        check(out, err, exitcode=1, workers=2)
    out, err = log([epoch(1)], srun)
    with pytest.raises(SanityError, match=r'status 9 without an error line; srun: task 1 on '
                                          r'node2: Killed$'):
        check(out, err, exitcode=9, workers=2)


def test_error_line_is_the_failure_reason(log):
    out, err = log([epoch(1)], ['chatter', "error: corrupt image '/d/7.jpg': truncated JPEG"])
    with pytest.raises(SanityError, match=r"payload failed: error: corrupt image '/d/7.jpg'"):
        check(out, err, exitcode=2)


@pytest.mark.parametrize('lines, exitcode, workers, message', [
    ([epoch(1), epoch(2), SUMMARY], 0, 1, r'expected epochs 1..3'),
    ([epoch(1), epoch(2), epoch(3, loss=float('nan')), SUMMARY], 0, 1, 'loss is nan'),
    ([epoch(1), epoch(2, images=28), epoch(3), SUMMARY], 0, 1, 'trained on 28 images'),
    ([epoch(1), epoch(2), epoch(3)], 0, 1, r'expected summaries of workers 0..0, found \[\]'),
    ([epoch(1), epoch(2), epoch(3), SUMMARY], -9, 1,
     'exited with status -9 without an error line; last line of .*err: I0000 tf chatter'),
    ([epoch(1), epoch(2), epoch(3), SUMMARY], 0, 2, r'summaries of workers 0..1, found \[0\]'),
    ([epoch(1), epoch(2), epoch(3), epoch(1, worker=1), epoch(2, worker=1), SUMMARY, summary(1)],
     0, 2, r'worker 1: expected epochs 1..3, found \[1, 2\]'),
    ([epoch(1), epoch(2), epoch(3), epoch(1, worker=1), epoch(2, worker=1),
      epoch(3, worker=1, steps=28), SUMMARY, summary(1)], 0, 2, 'worker 1, epoch 3: 28 steps'),
])
def test_incomplete_runs_fail(log, lines, exitcode, workers, message):
    out, err = log(lines, ['I0000 tf chatter'])
    with pytest.raises(SanityError, match=message):
        check(out, err, exitcode=exitcode, workers=workers)


def test_missing_value_is_an_error_not_zero(log):
    out, _ = log([SUMMARY])
    with pytest.raises(SanityError, match="no 'device_peak_bytes'"):
        sn.evaluate(payload_log.summary_value(out, 'device_peak_bytes'))
