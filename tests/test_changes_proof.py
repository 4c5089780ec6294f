"""benchmarks/changes_proof.py, one small real case of each: nightly histories made from the
real perflog records of the README's first command (every test case it logs), with 3% noise
on each value, through ``ssb-references changes`` and ``compare``."""
import importlib.util
import os

import pytest

from conftest import REPO


@pytest.fixture(scope='module')
def proof():
    spec = importlib.util.spec_from_file_location(
        'changes_proof', os.path.join(REPO, 'benchmarks', 'changes_proof.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope='module')
def real_records(default_run, proof):
    cwd, _ = default_run
    recs = proof.templates(cwd / 'perflogs' / 'generic' / 'default' / 'TrainingTest.log')
    assert len(recs) >= 2                      # LR&FS and HR&VS at least
    return recs


def test_identical_history_a_step_a_small_step_and_a_creep(proof, real_records):
    result = proof.prove(real_records, nights=240, partitions=2, noise=0.03, seed=0)
    # identical: no series with a change point (at most 1% of them), no compare row marked
    assert result['identical: series with change points'] <= 0.01 * result['series']
    marked, rows = result['identical: compare rows marked']
    assert marked == 0 and rows >= 20
    # the 10% throughput step at night 200: in every series, within +-2 nights, 7-13%
    found, total = result['step: throughput series found']
    assert found == total == 2 * len(real_records)
    assert result['step: other change points'] == 0
    # 3%: under the 5% floor
    assert result['3% step: series with change points'] == 0
    # 1% a week: found, within half a year
    assert 4 <= result['creep: found after weeks'] <= 26
    assert proof.passed(result)


def test_the_throughput_step_is_placed_and_sized_by_the_command(proof, real_records, tmp_path):
    logs = proof.write_history(tmp_path, real_records[:1], 230, 1, 'step', 0.03, 1)
    rows, judged = proof.run_changes(logs, str(tmp_path / 'changes'))
    (thr,) = [r for r in rows if r['variable'] == 'throughput']
    assert abs(proof.night_of(thr) - 200) <= 2 and 7 <= -float(thr['change_pct']) <= 13
    assert thr['system_partition'] == 'generic:p0' and float(thr['pvalue']) <= 0.001
    assert judged >= 8
