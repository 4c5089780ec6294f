"""Writers of reference files in a shared directory: concurrent ``ssb-references update`` runs
lose none of each other's entries, and a history copy is complete or absent (docs/references.md
"Several writers"). Real processes on real files."""
import os
import resource
import signal
import subprocess
import sys

import pytest
import yaml

from reference_runs import STEADY, record, write_perflog
from ssb_common import safefiles
from ssb_references.reffile import reffile

BIN = os.path.dirname(sys.executable)
PARTITIONS = 8


def partition_perflogs(root, n=PARTITIONS):
    """One perflog per partition p0..p(n-1) of system 'generic', three runs each."""
    return [write_perflog(root / 'perflogs' / 'generic' / f'p{p}' / 'TrainingTest.log',
                          [record(s, i, partition=f'p{p}') for i, s in enumerate(STEADY)])
            for p in range(n)]


def concurrent_updates(perflogs, ref_dir, env=None):
    """``ssb-references update`` of each perflog, all started at once; (exit statuses,
    partitions found in the file afterwards)."""
    procs = [subprocess.Popen([os.path.join(BIN, 'ssb-references'), 'update', '--perflog', log,
                               '--reference-dir', str(ref_dir)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for log in perflogs]
    statuses = [(p.wait(), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    refs = reffile.load(os.path.join(ref_dir, 'generic.yaml'))
    return statuses, {key[0] for key in refs.entries}


def test_eight_concurrent_updates_keep_every_partition(tmp_path):
    perflogs = partition_perflogs(tmp_path)
    for attempt in range(2):
        statuses, found = concurrent_updates(perflogs, tmp_path / 'refs')
        assert [s for s, _ in statuses] == [0] * PARTITIONS, statuses
        assert found == {f'generic:p{p}' for p in range(PARTITIONS)}, (attempt, found)
    # Every history copy is a complete file: each is the file one earlier update wrote.
    history = sorted((tmp_path / 'refs' / 'history').iterdir())
    assert len(history) == 2 * PARTITIONS - 1
    for copy in history:
        assert reffile.load(str(copy)).entries, copy
    assert not [p for p in (tmp_path / 'refs').iterdir() if p.name.startswith('.partial-')]


def _small_files(limit):
    def limit_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # a write past the limit fails: EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return limit_files


def test_a_history_copy_that_cannot_be_written_is_absent_and_the_file_unchanged(tmp_path):
    """The disk fills up while the old file is copied to history/ (here: a file size limit,
    which fails the write as a full disk does): no truncated copy, the old file kept."""
    perflogs = partition_perflogs(tmp_path, 2)
    ref_dir = tmp_path / 'refs'
    cmd = [os.path.join(BIN, 'ssb-references'), 'update', '--reference-dir', str(ref_dir)]
    subprocess.run(cmd + ['--perflog', perflogs[0], '--perflog', perflogs[1]], check=True,
                   capture_output=True)
    before = (ref_dir / 'generic.yaml').read_text()
    # p1 alone: the new file is smaller than the old one, so it can be written and the copy not.
    cmd += ['--replace', '--perflog', perflogs[1]]
    new = subprocess.run([cmd[0], 'propose'] + cmd[2:], check=True, capture_output=True,
                         text=True).stdout
    assert len(new) < len(before) - 200
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          preexec_fn=_small_files((len(new) + len(before)) // 2))
    assert proc.returncode == 2
    assert proc.stderr.count('\n') == 1 and 'ssb-references update: error:' in proc.stderr
    assert 'Traceback' not in proc.stderr
    assert (ref_dir / 'generic.yaml').read_text() == before
    assert not list((ref_dir / 'history').iterdir())
    assert not [p for p in ref_dir.iterdir() if p.name.startswith('.partial-')]
    assert yaml.safe_load(before)['TrainingTest']['generic:p0']


def _update(perflog, ref_dir):
    return subprocess.run([os.path.join(BIN, 'ssb-references'), 'update', '--perflog', perflog,
                           '--reference-dir', str(ref_dir)], capture_output=True, text=True)


def test_a_planted_lock_or_history_link_is_refused_in_one_line(tmp_path):
    perflog = partition_perflogs(tmp_path, 1)[0]
    ref_dir, target = tmp_path / 'refs', tmp_path / 'elsewhere'
    ref_dir.mkdir()
    target.mkdir()
    (ref_dir / '.generic.yaml.lock').symlink_to(target / 'lock')
    proc = _update(perflog, ref_dir)
    assert proc.returncode == 2 and proc.stderr == (
        f'ssb-references update: error: {ref_dir}/.generic.yaml.lock is a symbolic link: '
        f'refusing to follow it (remove it)\n')
    (ref_dir / '.generic.yaml.lock').unlink()
    assert _update(perflog, ref_dir).returncode == 0
    (ref_dir / 'history').symlink_to(target)
    proc = _update(perflog, ref_dir)
    assert proc.returncode == 2 and proc.stderr == (
        f'ssb-references update: error: {ref_dir}/history is a symbolic link, not a '
        f'directory: refusing to write in it (remove it)\n')
    assert not list(target.iterdir())


def test_a_writer_stuck_holding_the_lock_is_named_not_waited_for_forever(tmp_path):
    path = tmp_path / 'generic.yaml'
    holder = subprocess.Popen([sys.executable, '-c', (
        'import sys, time; from ssb_common import safefiles\n'
        f'with safefiles.locked({str(path)!r}):\n'
        '    print("held", flush=True); time.sleep(60)')], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == 'held\n'
        with pytest.raises(safefiles.LockTimeout, match=(
                rf'waited 1 s for {tmp_path}/\.generic\.yaml\.lock, held by pid {holder.pid} '
                r'on .* since .*: is it stuck\?')):
            with safefiles.locked(str(path), wait=1):
                pass
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    with safefiles.locked(str(path), wait=1):           # a killed holder's lock is free
        pass
