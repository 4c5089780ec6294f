"""The acceptance workflow end to end (docs/references.md), on ReFrame's builtin generic
system and through the CI Slurm cluster (site_configs/ci.py).

Three runs, references generated from them with ``ssb-references update``, then:
the next run passes against them; a reference tightened below what the machine
can do fails with ReFrame's performance failure; a malformed file is named in a
clear error. LR&FS at one scale only, serial, 58 images and 3 epochs (the workflow, not
the figures, is under test); the three runs in one session (``--reruns 2``).
"""
import datetime
import glob
import os
import re
import shutil
import sqlite3
import subprocess
import sys

import pytest
import yaml

from conftest import CI_CONFIG, REPO
from reframe_runs import read_perflog, run_reframe

SELECT = ['-n', 'TrainingTest.*variant=lrfs.*scale=single', '--exec-policy=serial',
          '-S', 'epochs=3', '-S', 'SyntheticMAMe.images_per_class=2']
SYSTEMS = {'generic': ('generic', 'default', None), 'ci': ('ci', 'cpu', CI_CONFIG)}


@pytest.fixture(scope='module', params=list(SYSTEMS))
def system(request):
    if request.param == 'ci':
        request.getfixturevalue('slurm')       # skips, or fails in CI, without a cluster
    return SYSTEMS[request.param]


def key(system):
    name, partition, _ = system
    return (f'{name}:{partition}', 'lrfs', 'smallcnn', 'single')


def ssb_references(*args, cwd):
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.run([sys.executable, '-m', 'ssb_references', *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300, env=env)


def reframe(system, cwd, ref_dir, *args):
    # ReFrame's reference prefix: the files are <prefix>/references/<system>.yaml.
    assert ref_dir.name == 'references'
    env = {'RFM_REFERENCE_PREFIX': str(ref_dir.parent), 'RFM_ENABLE_RESULTS_STORAGE': '1',
           'RFM_SQLITE_DB_FILE': str(cwd / 'results.db'), 'SSB_VENV': sys.prefix}
    return run_reframe(*args, cwd=cwd, env=env, config=system[2])


def perflog_records(system, cwd):
    (path,) = glob.glob(os.path.join(cwd, 'perflogs', system[0], system[1], 'TrainingTest.log'))
    return [r for r in read_perflog(path) if r['variant'] == 'lrfs']


def leaf(system, path):
    tree = yaml.safe_load(open(path))['TrainingTest']
    for k in key(system):
        tree = tree[k]
    return tree


def reasons(proc):
    return [line for line in proc.stdout.splitlines() if '* Reason:' in line]


@pytest.fixture(scope='module')
def three_runs(system, request, tmp_path_factory):
    """Three runs of a system without references: performance logged, never failed."""
    # The cluster's nodes must see the stage directories: its shared file system, not /tmp.
    factory = (request.getfixturevalue('shared_tmp_factory') if system[2] else
               tmp_path_factory)
    cwd = factory.mktemp('acceptance')
    no_refs = cwd / 'no-references' / 'references'
    proc = reframe(system, cwd, no_refs, '-r', *SELECT, '--reruns', 2)
    assert proc.returncode == 0, proc.stdout[-3000:]
    records = perflog_records(system, cwd)
    assert len(records) == 3
    assert {r['steady_epoch_time_ref'] for r in records} == {'0'}
    return system, cwd


def generate(system, cwd, ref_dir):
    # --min-tolerance 1: CI machines are shared and sub-second epochs noisy; what is
    # tested here is the workflow, the threshold rule is tested in test_references.py.
    proc = ssb_references('update', '--system', system[0], '--perflog-dir', cwd / 'perflogs',
                          '--reference-dir', ref_dir, '--min-tolerance', 1, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return ref_dir / f'{system[0]}.yaml'


def test_generated_references_pass_the_next_run(three_runs, tmp_path):
    system, cwd = three_runs
    ref_dir = tmp_path / 'references'
    proc = ssb_references('diff', '--perflog-dir', cwd / 'perflogs', '--reference-dir', ref_dir,
                          cwd=cwd)
    assert proc.returncode == 0 and 'no file yet' in proc.stdout
    path = generate(system, cwd, ref_dir)
    entry = leaf(system, path)
    upper = entry['steady_epoch_time'][2]
    assert entry['steady_epoch_time'][1] is None and entry['steady_epoch_time'][3] == 's'
    assert upper >= 1.0                         # at least --min-tolerance
    assert entry['distinct_shapes'][0] == 1          # LR&FS: one shape (full batches only)

    # The same proposal from ReFrame's results database.
    proc = ssb_references('propose', '--db', cwd / 'results.db', '--system', system[0],
                          '--reference-dir', ref_dir, '--min-tolerance', 1, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    assert yaml.safe_load(proc.stdout)['TrainingTest'] == yaml.safe_load(open(path))[
        'TrainingTest']

    proc = reframe(system, cwd, ref_dir, '-r', *SELECT)
    assert proc.returncode == 0, proc.stdout[-3000:]
    last = perflog_records(system, cwd)[-1]
    assert last['result'] == 'pass'
    assert float(last['steady_epoch_time_ref']) == entry['steady_epoch_time'][0]
    assert float(last['steady_epoch_time_upper_thres']) == upper
    assert float(last['throughput_lower_thres']) == entry['throughput'][1]
    assert f"(r:{entry['steady_epoch_time'][0]}, l:None, u:{upper})" in proc.stdout

    # The stored sessions compare with ReFrame's own --performance-compare.
    with sqlite3.connect(cwd / 'results.db') as conn:
        uuids = [u for (u,) in conn.execute(
            'SELECT uuid FROM sessions ORDER BY session_start_unix')]
    proc = run_reframe(f'--performance-compare={uuids[0]}/{uuids[-1]}/median:/', cwd=cwd,
                       env={'RFM_ENABLE_RESULTS_STORAGE': '1',
                            'RFM_SQLITE_DB_FILE': str(cwd / 'results.db')})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert 'steady_epoch_time' in proc.stdout and 'pdiff' in proc.stdout


def test_a_reference_tightened_below_the_machine_fails(three_runs, tmp_path):
    system, cwd = three_runs
    path = generate(system, cwd, tmp_path / 'references')
    text = open(path).read()
    entry = leaf(system, path)
    value = entry['steady_epoch_time'][0]
    tight = value / 10
    upper = entry['steady_epoch_time'][2]
    text = text.replace(f'steady_epoch_time: [{value}, null, {upper}, s]',
                        f'steady_epoch_time: [{tight}, null, 0.05, s]')
    open(path, 'w').write(text)
    assert leaf(system, path)['steady_epoch_time'] == [tight, None, 0.05, 's']

    proc = reframe(system, cwd, tmp_path / 'references', '-r', *SELECT)
    assert proc.returncode != 0
    (reason,) = reasons(proc)
    assert 'performance error: failed to meet reference(s): steady_epoch_time=' in reason
    assert f'expected {tight}' in reason
    assert perflog_records(system, cwd)[-1]['result'] == 'fail'

    # The machine did not change, the reference did: against the runs before it (at least
    # three of the same workload), the run is no drift ...
    proc = ssb_references('drift', '--perflog-dir', cwd / 'perflogs', '--all',
                          '--reference-dir', tmp_path / 'references', cwd=cwd)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (line,) = [text for text in proc.stdout.splitlines() if ' steady_epoch_time ' in text]
    # (the interval at the session's per-value level, 99% or more; the smallest change it
    # catches; the status)
    assert re.search(r' history [\d.]+ \[[-\d.e+]+, [\d.e+]+\] \(99[.\d]*%, n=\d+\) +\S+ +ok',
                     line), line
    # ... while with no earlier run selected the references judge it, and say so.
    last = perflog_records(system, cwd)[-1]
    # A second before it ended (ISO text rounds): the runs before it ended long before.
    since = datetime.datetime.fromtimestamp(float(last['job_completion_time_unix']) - 1,
                                            datetime.timezone.utc).isoformat()
    proc = ssb_references('drift', '--perflog-dir', cwd / 'perflogs', '--since', since,
                          '--reference-dir', tmp_path / 'references', cwd=cwd)
    assert proc.returncode == 1
    (line,) = [text for text in proc.stdout.splitlines() if ' steady_epoch_time ' in text]
    assert re.search(r' reference [\d.e-]+ \[', line) and ' regressed ' in line, line
    assert '0 earlier run(s) of this workload and payload series, 3 needed' in line


def test_a_malformed_reference_file_is_a_clear_error(three_runs, tmp_path):
    system, cwd = three_runs
    ref_dir = tmp_path / 'references'
    ref_dir.mkdir()
    path = ref_dir / f'{system[0]}.yaml'
    path.write_text('TrainingTest:\n  $index: [$partition, variant\n')
    proc = reframe(system, cwd, ref_dir, '-r', *SELECT)
    assert proc.returncode != 0
    (reason,) = reasons(proc)
    assert f"reference parse error: malformed reference file '{path}': not valid YAML" in reason
    assert "'Traceback" not in proc.stdout

    proc = ssb_references('update', '--perflog-dir', cwd / 'perflogs', '--reference-dir',
                          ref_dir, cwd=cwd)
    assert proc.returncode == 2
    assert f"malformed reference file '{path}'" in proc.stderr
    assert path.read_text() == 'TrainingTest:\n  $index: [$partition, variant\n'
    shutil.rmtree(ref_dir)
