"""Compact runs (ssb_references/runs/compact.py) hold exactly what plain dicts held, the trend
plot's thinning keeps every stretch's extremes, and benchmarks/growth.py measures and
tabulates at a tiny size."""
import importlib.util
import math
import os

import numpy as np

from conftest import REPO
from reference_runs import record, write_perflog
from ssb_references.report import charts
from ssb_references.runs import perflog
from ssb_references.runs.run import normalize


def plain(rec):
    """A run's fields, performance variables and references as the plain reader built them."""
    perf, refs = {}, {}
    for name in rec:
        var = name[:-len('_value')]
        if name.endswith('_value') and f'{var}_unit' in rec:
            value = perflog._float(rec[name])
            if value is not None:
                perf[var] = (value, rec[f'{var}_unit'])
                refs[var] = tuple(perflog._float(rec.get(f'{var}_{k}'))
                                  for k in ('ref', 'lower_thres', 'upper_thres'))
    fields = {k: normalize(v) for k, v in rec.items() if not k.endswith(perflog.PERF_SUFFIXES)}
    return fields, perf, refs


def test_compact_runs_hold_what_plain_dicts_held(tmp_path):
    recs = [record(0.5 + 0.01 * i, i, variant=('lrfs', 'hrvs')[i % 2]) for i in range(40)]
    recs[7]['epochs'] = '5'                       # a field that varies in one run only
    recs[9]['throughput_value'] = 'nan'           # not measured
    recs[11]['host_peak_memory_ref'] = '700'
    path = write_perflog(tmp_path / 'TrainingTest.log', recs)
    runs = perflog.read([path])
    for (_, rec), run in zip(perflog.records(path), runs):
        fields, perf, refs = plain(rec)
        assert dict(run.fields) == fields and len(run.fields) == len(fields)
        assert all(run.fields.get(k) == v and k in run.fields for k, v in fields.items())
        assert run.fields.get('no such field', 'x') == 'x' and 'no such field' not in run.fields
        assert dict(run.perf) == perf and set(run.perf) == set(perf)
        assert list(run.perf.values()) == list(perf.values())    # the Mapping's own view
        assert run.logged_refs == refs
    assert 'throughput' not in runs[9].perf and runs[7].get('epochs') == '5'
    assert runs[11].logged_refs['host_peak_memory'] == (700.0, None, None)
    # what repeats is shared: one dict for the fields LR&FS runs have alike (once the reader
    # has seen which fields vary from run to run)
    assert runs[20].fields.shared is runs[22].fields.shared
    assert 'job_completion_time_unix' in runs[20].fields.own


def test_thinning_keeps_each_stretchs_lowest_and_highest():
    rng = np.random.default_rng(0)
    pts = [(i, float(v)) for i, v in enumerate(rng.normal(size=5000))]
    pts[1234] = (1234, 99.0)
    kept = charts.thin(pts, 300)
    assert len(kept) <= 300 and kept == sorted(kept) and (1234, 99.0) in kept
    assert min(pts, key=lambda p: p[1]) in kept
    assert charts.thin(pts[:10], 300) == pts[:10]


def test_growth_measures_a_command_and_tabulates(tmp_path):
    spec = importlib.util.spec_from_file_location(
        'growth', os.path.join(REPO, 'benchmarks', 'growth.py'))
    growth = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(growth)
    recs = [record(0.5, 0), record(1.0, 1, variant='hrvs')]
    results = growth.grow(recs, [('30 x 4', 30, 4)], 1)
    assert {name for _, _, name in results} == {'drift', 'compare', 'report', 'changes'}
    for runs in results.values():
        wall, cpu, mib = runs[0]
        assert wall > 0 and cpu > 0 and 50 < mib < 2000 and not math.isnan(wall)
    text = growth.table(results)
    assert '| 30 x 4 | 240 | changes |' in text and text.count('\n') == 5
    # the target is wall time; CPU time within it on a busy machine is said as such
    assert [growth._verdict(wall, cpu, mib, (60, 1024)) for wall, cpu, mib in
            ((50, 40, 900), (68, 54, 700), (70, 61, 700), (50, 40, 1100))] == [
        'met', 'met on CPU only', 'MISSED', 'MISSED']
