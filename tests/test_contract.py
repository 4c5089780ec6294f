"""payload/contract.py is the one home of the performance variables: the docs' tables, the
tests' variables and ssb-references' policies agree with it."""
import os
import re

import pytest
from conftest import REPO

from payload import contract


def doc_tables(name):
    """Rows of every markdown table in docs/<name>, as lists of cells."""
    rows = []
    with open(os.path.join(REPO, 'docs', name)) as f:
        for line in f:
            if line.startswith('| ') and not line.startswith('|---'):
                rows.append([c.strip() for c in line.strip().strip('|').split('|')])
    return rows


def names(cell):
    return re.findall(r'`([a-z_0-9]+)`', cell.split('(')[0])


def test_every_variable_is_documented_with_its_unit():
    documented = {}
    for row in doc_tables('metrics.md'):
        if len(row) == 3 and row[1] and row[0] != 'variable':
            units = [u.strip() for u in row[1].split(',')]
            for name, unit in zip(names(row[0]), units):
                documented.setdefault(name, unit)
        elif len(row) == 2:                             # the gap's table: no unit column
            for name in names(row[0]):
                documented.setdefault(name, 'ratio')
    for v in contract.PERF_VARS:
        assert documented.get(v.name) == v.unit, (v.name, documented.get(v.name), v.unit)


def test_the_floor_table_is_the_contract():
    seen = set()
    for row in doc_tables('references.md'):
        if len(row) != 5 or row[0] == 'variable':
            continue
        for name in names(row[0]):
            v = contract.BY_NAME[name]
            seen.add(name)
            assert {'both sides': 'exact'}.get(row[1], row[1]) == v.better, name
            assert float(row[2].rstrip('%') or 0) / (100 if '%' in row[2] else 1) == \
                pytest.approx(v.rel_floor), name
            if row[3].startswith('('):
                assert v.follows, name                    # a rate: its time's tolerance
            else:
                assert float(row[3].split()[0]) == pytest.approx(v.abs_floor), name
    # Spreads and interval bounds move with their variable: never referenced, no floors.
    assert seen == {v.name for v in contract.PERF_VARS if not v.spread_of}


# Workload variables that do not change the work: which models run, and where the data is
# read from and staged to (the data itself is ``dataset``).
NOT_WORKLOAD = {'models', 'data_dir', 'stage_dir'}


def test_every_test_has_the_workload_it_is_keyed_by():
    from reframe_tests.gap import SizeShapeGap
    from reframe_tests.time_to_accuracy import TimeToAccuracy
    from reframe_tests.training import TrainingTest
    from reframe_tests.workload import Workload
    own = set(Workload.var_space) - {'tensorflow_version', 'payload_version', 'suite_version'}
    # Every workload variable is part of the identity, or said not to be.
    assert own - NOT_WORKLOAD == set(contract.workload_fields(None))
    for variant in contract.VARIANTS:
        fields = set(contract.workload_fields(variant))
        assert fields <= set(TrainingTest.var_space), variant
        assert set(contract.WORKLOAD_OF_VARIANT[variant]) <= fields
        tta = set(contract.workload_fields(variant, to_accuracy=True))
        assert tta - fields == set(contract.WORKLOAD_TO_ACCURACY) <= set(TimeToAccuracy.var_space)
    # The gap is keyed by both of its runs' workloads: a pixel budget or an image size.
    gap = contract.workload_fields(None)
    assert set(gap) <= set(SizeShapeGap.var_space)
    assert set(gap) == set(contract.workload_fields('lrfs')) | set(contract.workload_fields('hrvs'))
    # Precision, XLA and the step kind define a workload: a bfloat16 run is not a float32 run.
    assert {'precision', 'jit_compile', 'training_step', 'pixel_budget'} <= set(gap)


def test_the_tests_log_the_contract_variables():
    from reframe_tests.training import TrainingTest
    assert tuple(TrainingTest.param_space['model']) == contract.MODELS
    assert tuple(TrainingTest.param_space['variant']) == contract.VARIANTS
    for v in contract.perf_vars('TrainingTest'):
        assert v.key or v.name == 'parallel_efficiency', v.name
        assert v.spread_of is None or v.spread_of in contract.BY_NAME, v.name
    from reframe_tests import gap
    for v in contract.perf_vars('SizeShapeGap'):
        if v.spread_of:                 # the bounds of a per-epoch ratio's interval
            assert v.spread_of in gap.PER_EPOCH and v.name.startswith(v.spread_of), v.name
        else:
            assert v.name in gap.RATIOS, v.name
    assert gap.PER_EPOCH <= set(gap.RATIOS)


def test_the_summary_keys_are_the_contract(tiny_dataset):
    """The payload's SSB-SUMMARY holds exactly the contract's keys (both variants: each echoes
    its own settings and None for the other's), and every variable read from it exists."""
    from conftest import run_payload
    from test_step import summary_of
    common = ['--data-dir', tiny_dataset, '--epochs', '2', '--input-probe-seconds', '0']
    lrfs = summary_of(run_payload('--variant', 'lrfs', '--batch-size', '8', '--image-size', '64',
                                  '--crop-size', '56', *common))
    hrvs = summary_of(run_payload('--variant', 'hrvs', '--pixel-budget', '8k', *common))
    for summary in (lrfs, hrvs):
        assert set(summary) == contract.SUMMARY_KEYS, set(summary) ^ contract.SUMMARY_KEYS
    assert (lrfs['crop_size'], lrfs['pixel_budget'], hrvs['crop_size']) == (56, None, None)
    assert hrvs['hrvs_batching'] == 'single' and hrvs['upscale'] is True
    keys = {v.key for v in contract.PERF_VARS if v.key}
    assert keys <= contract.SUMMARY_KEYS, keys - contract.SUMMARY_KEYS
