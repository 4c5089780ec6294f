"""The suite in its image, for real, on ReFrame's generic system: both variants and the gap
run through ch-run, each perflog record names the runtime and the image's digest, the
payload found itself in the container; bad images are refused at set-up and nothing trains
on the host; a runtime that quietly runs the payload on the host fails the sanity check."""
import glob
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO
from reframe_runs import read_perflog, run_reframe

from payload import container

PAIR = '(TrainingTest|SizeShapeGap).*smallcnn.*single'
LRFS = 'TrainingTest.*lrfs.*smallcnn.*single'
# Functional proof in CI's time: 29 images, 3 epochs (the gap's noise limit is not for these).
SMALL = ('-S', 'SyntheticMAMe.images_per_class=1', '-S', 'TrainingTest.epochs=3')


def reasons(proc):
    assert 'Traceback' not in proc.stdout + proc.stderr, proc.stdout[-3000:]
    return [line.split('* Reason: ', 1)[1] for line in proc.stdout.splitlines()
            if '* Reason: ' in line]


def job_lines(cwd, test):
    (script,) = glob.glob(os.path.join(cwd, 'output', 'generic', 'default', 'builtin',
                                       f'{test}_*', 'rfm_job.sh'))
    with open(script) as f:
        return f.read().splitlines()


def test_both_variants_and_the_gap_run_in_the_image(suite_image, tmp_path):
    path, digest = suite_image
    proc = run_reframe('-r', '-t', 'container', '-n', PAIR, '-S', f'container_image={path}',
                       *SMALL, '--skip-performance-check', cwd=tmp_path,
                       env={'RFM_COLORIZE': 'n'})
    assert proc.returncode == 0, proc.stdout[-6000:]
    assert 'Ran 4/4 test case(s)' in proc.stdout, proc.stdout[-3000:]   # the data fixture too
    data = job_lines(tmp_path, 'SyntheticMAMe')[-1]      # the data are made in it too
    assert data.startswith('ch-run --set-env ') and f' {path} -- python3 -m ' in data
    perflogs = tmp_path / 'perflogs' / 'generic' / 'default'
    runs = read_perflog(perflogs / 'TrainingTest.log')
    assert sorted(r['variant'] for r in runs) == ['hrvs', 'lrfs']
    for r in runs + read_perflog(perflogs / 'SizeShapeGap.log'):
        assert r['result'] == 'pass'
        assert (r['container_runtime'], r['container_detected']) == ('Charliecloud',
                                                                     'charliecloud'), r
        assert (r['container_image'], r['container_image_digest']) == (path, digest), r
    for out in glob.glob(str(tmp_path / 'output' / '*' / '*' / '*' / 'TrainingTest_*' /
                             'rfm_job.out')):
        with open(out) as f:
            assert f'"container_evidence": "/ is {path} of ' in f.read()
        with open(os.path.join(os.path.dirname(out), 'rfm_job.sh')) as f:
            script = f.read().splitlines()
        assert script[-2] == 'export USER="${USER:-$(id -un)}"'
        assert script[-1].startswith('ch-run --set-env ') and ' --data-dir /mnt/0 ' in script[-1]


def test_the_container_tag_needs_an_image(tmp_path):
    proc = run_reframe('-l', '-t', 'container', cwd=tmp_path)
    assert 'Found 0 check(s)' in proc.stdout, proc.stdout[-2000:]


def image_without_tensorflow(path, tmp_path):
    """The image, hard-linked (nothing copied, nothing of it changed), less TensorFlow."""
    copy = tmp_path / 'no-tf'
    subprocess.run(['cp', '-al', path, str(copy)], check=True)
    (tf,) = glob.glob(str(copy / 'opt' / 'venv' / 'lib' / 'python3*' / 'site-packages' /
                          'tensorflow'))
    shutil.rmtree(tf)
    return str(copy)


@pytest.mark.parametrize('kind', ['missing', 'not an image', 'not the suite\'s', 'no TensorFlow'])
def test_a_bad_image_is_one_error_at_set_up_and_nothing_trains(suite_image, tmp_path, kind):
    text = tmp_path / 'notes.txt'
    text.write_text('not an image\n')
    bad, said = {
        'missing': (str(tmp_path / 'gone'), f"container image '{tmp_path}/gone' does not exist"),
        'not an image': (str(text), f"'{text}' is not a container image: Charliecloud runs a "
                                    f"directory or a SquashFS file"),
        'not the suite\'s': (str(tmp_path), f"'{tmp_path}' is not a Charliecloud image of the "
                                            f"suite: it has no /bin/sh"),
        'no TensorFlow': (None, 'has no tensorflow for its python3'),
    }[kind]
    if bad is None:
        bad = image_without_tensorflow(suite_image[0], tmp_path)
    (tmp_path / 'rfm').mkdir()
    proc = run_reframe('-r', '-n', LRFS, '-S', f'container_image={bad}', cwd=tmp_path / 'rfm',
                       env={'RFM_COLORIZE': 'n'})
    assert proc.returncode != 0
    (reason,) = reasons(proc)
    assert reason.startswith('image error: ') and said in reason, reason
    assert 'Failing phase: setup' in proc.stdout
    # The training test never ran: its data fixture failed first; no job ran anything.
    assert 'TrainingTest %variant=lrfs' in proc.stdout and 'dependencies failed' in proc.stdout
    assert not glob.glob(str(tmp_path / 'rfm' / '**' / 'rfm_job.out'), recursive=True)


# A broken runtime: ch-run that runs the command on the host, its mounts emulated.
HOST_CH_RUN = '''\
#!{python}
import os, sys
args = sys.argv[1:]
cut = args.index('--')
binds = [a.split('=', 1)[1].split(':') for a in args[:cut] if a.startswith('--bind=')]
def host(arg):
    for src, dst in binds:
        if arg == dst or arg.startswith(dst + '/'):
            return src + arg[len(dst):]
    return arg
for workdir in [a.split('=', 1)[1] for a in args[:cut] if a.startswith('--cd=')]:
    os.chdir(host(workdir))
command = [host(a) for a in args[cut + 1:]]
os.execvp(command[0], command)
'''


def test_a_runtime_that_runs_on_the_host_fails_the_sanity_check(suite_image, tmp_path):
    fake = tmp_path / 'bin' / 'ch-run'
    fake.parent.mkdir()
    fake.write_text(textwrap.dedent(HOST_CH_RUN).format(python=sys.executable))
    fake.chmod(0o755)
    (tmp_path / 'rfm').mkdir()
    path = f'{fake.parent}:{os.path.dirname(sys.executable)}:{os.environ["PATH"]}'
    proc = run_reframe('-r', '-n', LRFS, '-S', f'container_image={suite_image[0]}', *SMALL,
                       cwd=tmp_path / 'rfm', env={'RFM_COLORIZE': 'n', 'PATH': path})
    assert proc.returncode != 0
    (reason,) = reasons(proc)
    assert reason.startswith('sanity error: the job ran Charliecloud, but the payload found '
                             'no container around it: worker 0: / is a file system root'), reason


def test_runs_on_the_host_say_so(default_run):
    cwd, _ = default_run
    runs = read_perflog(cwd / 'perflogs' / 'generic' / 'default' / 'TrainingTest.log')
    here = container.detect()['container_runtime']
    assert {(r['container_runtime'], r['container_detected']) for r in runs} == {('none', here)}


def test_the_overhead_benchmark_runs(suite_image, tmp_path):
    """benchmarks/container.py at its smallest: 3 pairs of 2 epochs (docs/benchmarks.md)."""
    proc = subprocess.run([sys.executable, os.path.join(REPO, 'benchmarks', 'container.py'),
                           '--image', suite_image[0], '--pairs', '3', '--epochs', '2',
                           '--images', '1', '--workdir', str(tmp_path)],
                          capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert '| container | 3 |' in proc.stdout and f'| host {sys.executable} | 3 |' in proc.stdout
    assert f'Container / host {sys.executable} steady img/s: **' in proc.stdout
