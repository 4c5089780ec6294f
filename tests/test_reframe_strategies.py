"""End to end on generic: the three HR&VS batching strategies side by side, read from a
packed HDF5 file: ``reframe -P hrvs_batching=padded,bucketed`` at batch 4, then ``single``
(batch 1 by definition: a batch size for it is refused at set-up). The payload's own
batching checks are made here, on the runs ReFrame starts (its sanity check counts the
29 images each epoch trained)."""
import glob
import os

import pytest

from reframe_runs import read_perflog, run_reframe
from sizeshape_datasets import hdf5


@pytest.fixture(scope='module')
def strategies_run(tiny_dataset, tmp_path_factory):
    cwd = tmp_path_factory.mktemp('rfm-strategies')
    packed = str(cwd / 'tiny mame.h5')
    hdf5.pack(tiny_dataset, packed)
    common = ('-n', 'TrainingTest.*variant=hrvs.*%scale=single',   # one -n: several are or-ed
              '-S', 'pixel_budget=4k', '-S', 'epochs=2', '-S', f'data_dir={packed}')
    for strategies in (('-P', 'hrvs_batching=padded,bucketed', '-S', 'hrvs_batch_size=4'),
                       ('-S', 'hrvs_batching=single')):
        proc = run_reframe('-r', *common, *strategies, cwd=cwd)
        assert proc.returncode == 0, proc.stdout[-5000:]
    (perflog,) = glob.glob(os.path.join(cwd, 'perflogs', 'generic', 'default', 'TrainingTest.log'))
    records = read_perflog(perflog)
    assert len(records) == 3 and {r['variant'] for r in records} == {'hrvs'}
    return packed, {r['hrvs_batching']: r for r in records}


def value(record, var):
    return float(record[f'{var}_value'])


def test_each_strategy_reports_its_costs(strategies_run):
    packed, records = strategies_run
    assert set(records) == {'single', 'padded', 'bucketed'}
    for strategy, r in records.items():
        assert r['result'] == 'pass', strategy
        assert r['dataset'] == packed
        assert r['precision'] == 'float32' and r['jit_compile'] == 'false'
        assert r['padded_fraction_unit'] == 'fraction'
        assert r['achieved_gflops_unit'] == 'GFLOP/s' and value(r, 'achieved_gflops') > 0
        assert 0 < value(r, 'peak_fraction') < 1
        assert value(r, 'pixel_throughput') > 0
        assert value(r, 'traced_graphs') == value(r, 'distinct_shapes')
    single, padded, bucketed = (records[s] for s in ('single', 'padded', 'bucketed'))
    assert single['batch_size'] == '1'                  # single is batch 1 by definition
    assert padded['batch_size'] == bucketed['batch_size'] == '4'
    assert value(single, 'padded_fraction') == 0
    for batched in (padded, bucketed):      # some pixels of a batch are padding, not all
        assert 0 < value(batched, 'padded_fraction') < 1
    assert value(single, 'distinct_shapes') > 20        # one shape per image
    assert value(bucketed, 'distinct_shapes') < 20      # a few buckets
