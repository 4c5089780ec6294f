"""SizeShapeGap end to end on ReFrame's builtin generic system: it runs after both variants,
its references come from ssb-references like TrainingTest's and live in the same file, and a
gap reference tighter than the machine's fails it with ReFrame's performance error, saying
which variant moved."""
import glob
import os
import re

import yaml

from conftest import stand_in_test
from ssb_contract.options import workload_fields
from reframe_runs import read_perflog
from reframe_tests import references as test_references
from test_acceptance_workflow import reasons, reframe, ssb_references

SELECT = ['-n', '(TrainingTest|SizeShapeGap).*scale=single', '--exec-policy=serial']


def gap_records(cwd):
    (path,) = glob.glob(os.path.join(cwd, 'perflogs', 'generic', 'default', 'SizeShapeGap.log'))
    return read_perflog(path)


def gap_test(record, **changed):
    """What references.for_test reads of a SizeShapeGap: the logged record's workload."""
    values = {name: record[name] for name in workload_fields(None)}
    values.update(model='smallcnn', scale='single', **changed)
    return stand_in_test('SizeShapeGap', 'SizeShapeGap %model=smallcnn', **values)


def test_gap_runs_after_both_variants_and_holds_its_references(default_run, tmp_path,
                                                                 monkeypatch):
    # The README's first command ran the gap after both variants (its own tests check that).
    first, _ = default_run
    monkeypatch.setattr(test_references, 'reference_prefix', lambda test: str(tmp_path))
    refs = tmp_path / 'references'
    (record,) = gap_records(first)
    assert record['result'] == 'pass' and record['model'] == 'smallcnn'
    assert record['payload_version'] and record['dataset'].startswith('synthetic-mame')
    for var in ('hrvs_lrfs_time_per_mpx', 'hrvs_lrfs_host_memory',
                'hrvs_lrfs_first_epoch_overhead', 'hrvs_lrfs_gflops'):
        assert float(record[f'{var}_value']) > 0 and record[f'{var}_unit'] == 'ratio'
    assert 0.5 < float(record['hrvs_lrfs_host_memory_value']) < 5

    # One file for both tests: ssb-references proposes the gap's references too.
    proc = ssb_references('update', '--system', 'generic', '--perflog-dir',
                          first / 'perflogs', '--reference-dir', refs, '--min-runs', 1,
                          '--min-tolerance', 1, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = yaml.safe_load(open(refs / 'generic.yaml'))
    assert data['SizeShapeGap']['$index'] == ['$partition', 'model', 'scale']
    entry = data['SizeShapeGap']['generic:default']['smallcnn']['single']
    time_per_mpx = entry['hrvs_lrfs_time_per_mpx']
    assert time_per_mpx[1] is None and time_per_mpx[3] == 'ratio'
    assert 'TrainingTest' in data
    assert 'SizeShapeGap/generic:default/smallcnn/single' in data['ssb-references']['entries']

    assert data['ssb-references']['noise_limit_cv'] == 0.25         # the default, per system
    # The gap's entry is for the workload of both runs it compared, as theirs are: a gap
    # reference set at one pixel budget (or image size) does not hold a run at another.
    gap_key = 'SizeShapeGap/generic:default/smallcnn/single'
    workload = data['ssb-references']['entries'][gap_key]['workload']
    assert set(workload) == set(workload_fields(None)), workload
    assert workload['pixel_budget'] == '65k' and workload['image_size'] == 256
    lrfs_key = 'generic:default/lrfs/smallcnn/single'
    assert data['ssb-references']['entries'][lrfs_key]['workload']['epochs'] == workload['epochs']
    for other, holds in (({}, True), ({'pixel_budget': '360k'}, False),
                         ({'image_size': 128}, False), ({'hrvs_batching': 'padded'}, False)):
        test = gap_test(record, **other)
        assert (test_references.for_test(test) is not None) == holds, other
    assert 'hrvs_lrfs_time_per_mpx_low' not in entry                 # bounds: no reference

    # An HR&VS that got slower per megapixel than this machine's: the gap test fails. And a
    # system whose noise limit no real run meets: it says the ratios mean nothing.
    entry['hrvs_lrfs_time_per_mpx'] = [entry['hrvs_lrfs_time_per_mpx'][0] / 10, None, 0.01,
                                       'ratio']
    data['ssb-references']['noise_limit_cv'] = 1e-6
    (refs / 'generic.yaml').write_text(yaml.safe_dump(data))
    proc = reframe(('generic', 'default', None), tmp_path, refs, '-r', *SELECT)
    assert proc.returncode != 0
    assert 'Ran 4/4 test case(s)' in proc.stdout      # the data, both variants, the gap
    (reason,) = reasons(proc)                       # the gap test only
    assert 'failed to meet reference(s)' in proc.stdout
    assert 'hrvs_lrfs_time_per_mpx=' in proc.stdout
    # ... saying which variant moved, with both variants' own figures.
    assert 'HR&VS slowed relative to LR&FS on generic:default' in reason, reason
    assert 'pixel_throughput: LR&FS ' in reason and 'Mpx/s (reference ' in reason, reason
    assert re.search(r'hrvs_lrfs_time_per_mpx is too noisy to mean anything: LR&FS '
                     r'pixel_throughput varies by CV 0\.\d+ over its 5 steady epochs, above '
                     r'the limit 1e-06 \(noise_limit_cv of the references file\); its 95% '
                     r'interval is \[[\d.]+, [\d.]+\]', reason), reason
    failed = [r for r in gap_records(tmp_path) if r['result'] == 'fail']
    assert len(failed) == 1


def test_a_ratio_says_when_its_inputs_cannot_carry_it():
    from reframe_tests.gap import SizeShapeGap
    from ssb_references.judge import stats
    quiet = {'lrfs': [32.0, 33.0, 31.5, 32.4], 'hrvs': [16.0, 16.3, 15.9, 16.1]}
    interval = stats.ratio_interval(quiet['lrfs'], quiet['hrvs'])
    assert SizeShapeGap.noise_of('r', 'pixel_throughput', quiet, 0.25, interval) == []
    noisy = {'lrfs': [32.0, 12.0, 31.5, 52.4], 'hrvs': quiet['hrvs']}
    (said,) = SizeShapeGap.noise_of('r', 'pixel_throughput', noisy, 0.25,
                                    stats.ratio_interval(noisy['lrfs'], noisy['hrvs']))
    assert said.startswith('r is too noisy to mean anything: LR&FS pixel_throughput varies by '
                           'CV 0.516 over its 4 steady epochs, above the limit 0.25')
    one = {'lrfs': [32.0], 'hrvs': [16.0, 16.3]}
    (said,) = SizeShapeGap.noise_of('r', 'pixel_throughput', one, 0.25, None)
    assert said == ('r: no interval without 2 steady epochs per variant (LR&FS 1, HR&VS 2): '
                    'run 3 epochs or more')
