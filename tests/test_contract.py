"""ssb_contract is the one home of the workload options and the performance variables: the
docs' tables, the tests' variables and ssb-references' policies agree with it."""
import os
import re

import pytest
from conftest import REPO

from ssb_common.reframe_private import (parameter_names, parameter_values, variable_default,
                                        variable_names)
from ssb_contract import perf
from ssb_contract.summary import SUMMARY_KEYS
from ssb_contract.options import MODELS, OPTIONS, VARIANTS, workload_fields


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
    for v in perf.PERF_VARS:
        assert documented.get(v.name) == v.unit, (v.name, documented.get(v.name), v.unit)


def test_the_floor_table_is_the_contract():
    seen = set()
    for row in doc_tables('references.md'):
        if len(row) != 5 or row[0] == 'variable':
            continue
        for name in names(row[0]):
            v = perf.BY_NAME[name]
            seen.add(name)
            assert {'both sides': 'exact'}.get(row[1], row[1]) == v.better, name
            assert float(row[2].rstrip('%') or 0) / (100 if '%' in row[2] else 1) == \
                pytest.approx(v.rel_floor), name
            if row[3].startswith('('):
                assert v.follows, name                    # a rate: its time's tolerance
            else:
                assert float(row[3].split()[0]) == pytest.approx(v.abs_floor), name
    # Spreads and interval bounds move with their variable: never referenced, no floors.
    assert seen == {v.name for v in perf.PERF_VARS if not v.spread_of}


# Workload variables that do not change the work: which models run, and where the data is
# read from and staged to (the data itself is ``dataset``).
NOT_WORKLOAD = {'models', 'data_dir', 'stage_dir'}


def test_every_workload_option_is_declared_once_with_its_default():
    from reframe_tests.time_to_accuracy import TimeToAccuracy
    from reframe_tests.training import TrainingTest
    for o in OPTIONS:
        cls = TimeToAccuracy if o.to_accuracy else TrainingTest
        if o.parameter:
            assert parameter_values(cls, o.name) == o.choices, o.name
        else:
            assert o.name not in parameter_names(cls), o.name
            assert variable_default(cls, o.name) == o.default, o.name


def test_every_test_has_the_workload_it_is_keyed_by():
    from reframe_tests.gap import SizeShapeGap
    from reframe_tests.time_to_accuracy import TimeToAccuracy
    from reframe_tests.training import TrainingTest
    from reframe_tests.workload import Workload
    own = variable_names(Workload) - {'tensorflow_version', 'payload_version', 'suite_version'}
    # Every workload variable is part of the identity, or said not to be.
    assert own - NOT_WORKLOAD == set(workload_fields(None))
    for variant in VARIANTS:
        fields = set(workload_fields(variant))
        assert fields <= variable_names(TrainingTest), variant
        assert {o.name for o in OPTIONS if o.variant == variant} <= fields
        tta = set(workload_fields(variant, to_accuracy=True))
        assert tta - fields == {o.name for o in OPTIONS if o.to_accuracy} <= \
            variable_names(TimeToAccuracy)
    # The gap is keyed by both of its runs' workloads: a pixel budget or an image size.
    gap = workload_fields(None)
    assert set(gap) <= variable_names(SizeShapeGap)
    assert set(gap) == set(workload_fields('lrfs')) | set(workload_fields('hrvs'))
    # Precision, XLA and the step kind define a workload: a bfloat16 run is not a float32 run.
    assert {'precision', 'jit_compile', 'training_step', 'pixel_budget'} <= set(gap)


def test_the_tests_log_the_contract_variables():
    from reframe_tests.training import TrainingTest
    assert parameter_values(TrainingTest, 'model') == MODELS
    assert parameter_values(TrainingTest, 'variant') == VARIANTS
    for v in perf.perf_vars('TrainingTest'):
        assert v.key or v.name == 'parallel_efficiency', v.name
        assert v.spread_of is None or v.spread_of in perf.BY_NAME, v.name
    from reframe_tests import gap
    for v in perf.perf_vars('SizeShapeGap'):
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
        assert set(summary) == SUMMARY_KEYS, set(summary) ^ SUMMARY_KEYS
    assert (lrfs['crop_size'], lrfs['pixel_budget'], hrvs['crop_size']) == (56, None, None)
    assert hrvs['hrvs_batching'] == 'single' and hrvs['upscale'] is True
    keys = {v.key for v in perf.PERF_VARS if v.key}
    assert keys <= SUMMARY_KEYS, keys - SUMMARY_KEYS
