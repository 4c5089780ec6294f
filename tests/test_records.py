"""Records are checked before they count: one record from the future, repeated or impossible
must not decide a verdict (ssb_references/runs/records.py, docs/hostile-input.md). Real
perflogs through the real CLI, in-process."""
import time

import pytest

from reference_runs import record, run_cli, write_perflog
from ssb_references.runs import records

HISTORY = [0.50, 0.51, 0.49, 0.50, 0.52]
YEAR_S = 365 * 86400


@pytest.fixture
def log(tmp_path):
    return tmp_path / 'perflogs' / 'generic' / 'default' / 'TrainingTest.log'


def history_then(*last):
    """Five runs of one workload, then ``last`` (records)."""
    return [record(s, i) for i, s in enumerate(HISTORY)] + list(last)


def drift(capsys, log):
    return run_cli(capsys, 'drift', '--perflog', log, '--reference-dir', log.parent / 'refs')


def test_a_run_from_the_future_is_left_out_and_the_slowdown_seen(log, capsys):
    future = record(0.50, 7)
    future['job_completion_time_unix'] = str(time.time() + YEAR_S)
    write_perflog(log, history_then(record(1.5, 6), future))        # 3x slower, then "2027"
    status, out, err = drift(capsys, log)
    assert status == 1 and 'steady_epoch_time' in out and 'regressed' in out
    assert '1 of 9 value(s) drifted' not in out and ' 0 of ' not in out
    (line,) = err.splitlines()
    assert line.startswith(f'warning: {log}: a run completed at ') and line.endswith(
        f'in the future beyond the {records.CLOCK_SKEW_S} s of clock skew allowed: left out '
        f'(job 1007)')


def test_a_run_within_the_clock_skew_counts(log, capsys):
    soon = record(1.5, 6)
    soon['job_completion_time_unix'] = str(time.time() + records.CLOCK_SKEW_S / 2)
    write_perflog(log, history_then(soon))
    status, out, err = drift(capsys, log)
    assert status == 1 and 'regressed' in out and not err


def test_the_same_run_repeated_counts_once(log, capsys, tmp_path):
    write_perflog(log, [record(0.5, 0)] * 3)
    status, out, err = run_cli(capsys, 'propose', '--perflog', log, '--min-runs', '3',
                               '--reference-dir', tmp_path / 'refs')
    assert status == 2 and '1 run(s), at least 3 needed' in err
    assert err.splitlines()[0] == (f'warning: {log}: the same run (same job or session, same '
                                   f'values) more than once: counted once (2 records)')


def test_one_huge_or_negative_value_is_left_out_not_the_interval(log, capsys):
    write_perflog(log, history_then(record(0.5, 5, steady_epoch_time=1e308),
                                    record(0.5, 6, steady_epoch_time=-0.5),
                                    record(1.5, 7)))
    status, out, err = drift(capsys, log)
    assert status == 1 and 'regressed' in out and '[-inf, inf]' not in out
    assert err.splitlines() == [
        f'warning: {log}: steady_epoch_time beyond 1e+150: it would overflow the statistics: '
        f'that value left out',
        f'warning: {log}: steady_epoch_time negative: no measurement gives that: that value '
        f'left out']


def test_a_negative_first_epoch_overhead_counts():
    (run,) = records.checked([_run(first_epoch_overhead=-0.01)], now=time.time())
    assert run.perf['first_epoch_overhead'][0] == -0.01


def _run(**values):
    from ssb_references.runs.run import Run
    return Run(system='generic', partition='generic:default', test='TrainingTest',
               fields={'jobid': '1'}, perf={k: (v, 's') for k, v in values.items()},
               time=time.time(), source='x')
