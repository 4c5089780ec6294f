"""ssb_contract is the one home of the workload options and the performance variables: the
docs' tables, the tests' variables and ssb-references' policies agree with it."""
import os
import re

import pytest
from conftest import REPO

from ssb_common.reframe_private import (parameter_names, parameter_values, variable_default,
                                        variable_names)
from payload.run import PAYLOAD_SETTINGS
from ssb_contract import perf
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


# Every key of the payload's SSB-SUMMARY line (docs/payload.md, "Output contract"), by what
# it describes: the settings it echoes, and these.
SUMMARY_KEYS = frozenset([o.name for o in OPTIONS if o.echoed] + list(PAYLOAD_SETTINGS) + [
    # steady state and its spread (summarise.steady_state)
    'epochs', 'steps_per_epoch', 'images_per_epoch', 'first_epoch_s', 'steady_epoch_s',
    'first_epoch_overhead_s', 'steady_epochs', 'steady_epoch_cv', 'images_per_s',
    'images_per_s_cv', 'mpx_per_s', 'mpx_per_s_cv', 'padded_fraction', 'gflops_per_epoch',
    'gflops_per_s', 'first_loss', 'final_loss',
    # shapes and tracing
    'distinct_shapes', 'traced_graphs', 'trace_seconds_per_shape',
    'graph_build_seconds_per_shape', 'compile_seconds',
    # input
    'input_wait_s', 'input_wait_fraction', 'input_images_per_s', 'input_bound',
    'input_bound_fraction', 'memory_input_s', 'mean_pixels_per_image', 'max_pixels_per_image',
    # memory
    'device_peak_bytes', 'host_peak_rss_bytes', 'memory_limit_bytes', 'device_memory',
    # energy
    'energy_per_epoch_j', 'energy_per_image_j', 'mean_power_w', 'energy_source', 'energy_note',
    # peak and FLOPs
    'peak_gflops', 'peak_source', 'peak_fraction', 'flops_convention', 'flops_count_s',
    'peak_measure_s', 'setup_s',
    # validation and time to accuracy
    'validate', 'val_subset', 'val_images', 'val_images_left_out', 'val_loss', 'val_accuracy',
    'val_seconds', 'val_traced_graphs', 'target_accuracy', 'target_reached', 'epochs_to_target',
    'seconds_to_target', 'best_val_accuracy', 'best_val_epoch',
    # staging and preparing (local_data)
    'stage_dir', 'stage_s', 'stage_bytes', 'stage_gb_per_s', 'prepare_s', 'prepare_bytes',
    'prepare_images_per_s',
    # the timed window (hostlock)
    'timing_lock', 'timing_lock_wait_s', 'timed_start_unix', 'timed_end_unix',
    # placement and threads
    'worker', 'workers', 'host', 'replicas', 'strategy', 'global_batch_size', 'intra_op_threads',
    'inter_op_threads', 'cpus_available', 'devices', 'container_runtime',
    'container_evidence',
    # data and provenance
    'classes', 'dataset', 'dataset_fingerprint', 'dataset_images', 'images_left_out',
    'data_format', 'git_revision', 'versions',
])


def test_the_summary_keys_are_the_contract(lrfs_run, hrvs_run):
    """The payload's SSB-SUMMARY holds exactly the contract's keys (both variants: each echoes
    its own settings and None for the other's), and every variable read from it exists.
    The runs are the payload tests' (conftest.py)."""
    (_, lrfs), (_, hrvs) = lrfs_run, hrvs_run
    for summary in (lrfs, hrvs):
        assert set(summary) == SUMMARY_KEYS, set(summary) ^ SUMMARY_KEYS
    assert (lrfs['crop_size'], lrfs['pixel_budget'], hrvs['crop_size']) == (56, None, None)
    assert hrvs['hrvs_batching'] == 'single' and hrvs['upscale'] is True
    keys = {v.key for v in perf.PERF_VARS if v.key}
    assert keys <= SUMMARY_KEYS, keys - SUMMARY_KEYS
