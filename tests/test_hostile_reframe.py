"""Hostile and malformed ``-S`` values through ReFrame itself: refused at set-up with the
choices named, never pasted into a job script as shell, never a traceback."""
import glob
import os
import shlex

import pytest
from conftest import REPO
from reframe_runs import run_reframe

APPTAINER = os.path.join(REPO, 'site_configs', 'apptainer_example.py')


def dry_run(tmp_path, *settings, config=None, names='TrainingTest.*lrfs.*single'):
    args = ['--dry-run', '-n', names]
    for setting in settings:
        args += ['-S', setting]
    if config:
        args += ['--system', 'apptainer_example']
    return run_reframe(*args, cwd=tmp_path, config=config,
                       env={'RFM_RESOLVE_MODULE_CONFLICTS': '0', 'RFM_COLORIZE': 'n'})


def job_script(tmp_path):
    (script,) = glob.glob(str(tmp_path / 'stage' / '*' / '*' / '*' / 'TrainingTest_*'
                               / 'rfm_job.sh'))
    return open(script).read()


def reasons(proc):
    assert 'Traceback' not in proc.stdout + proc.stderr, proc.stdout[-3000:]
    return [line.split('* Reason: ', 1)[1] for line in proc.stdout.splitlines()
            if '* Reason: ' in line]


def test_shell_in_a_choice_runs_nothing_and_names_the_choices(tmp_path):
    proc = dry_run(tmp_path, 'precision=float32; touch pwned #')
    assert proc.returncode != 0
    assert reasons(proc) == [("variable error: -S precision='float32; touch pwned #' is not one "
                             "of float32, mixed_float16, mixed_bfloat16")]
    assert not glob.glob(str(tmp_path / '**' / 'pwned'), recursive=True)
    assert not os.path.exists(os.path.join(REPO, 'pwned'))


# Two runs: each refuses all of its settings at once, every one named.
REFUSED = [{
    'subset=train;id': "-S subset='train;id' is not one of train, val, test",
    'training_step=split`id`': "-S training_step='split`id`' is not one of split, fused",
    'hrvs_batching=single&id': "-S hrvs_batching='single&id' is not one of single, padded, "
                               "bucketed",
    'retracing=all': "-S retracing='all' is not one of per-shape, reduced",
    'pixel_budget=0.5': "-S pixel_budget: pixel budget '0.5' must be a finite number of at "
                        "least 1024 pixels",
    'models=resnet5': "-S models='resnet5' is not one of smallcnn, resnet50, vgg16",
    'epochs=abc': "-S epochs='abc' is not a whole number",
    'lrfs_batch_size=0': '-S lrfs_batch_size=0 must be at least 1',
    'upscale=maybe': "-S upscale='maybe' is not true or false",
    'memory_limit_gib=nan': '-S memory_limit_gib=nan must be a finite number above 0',
    'data_dir=/data|mame': "-S data_dir='/data|mame': '|' separates the fields of the perflog",
}, {
    'pixel_budget=inf': "-S pixel_budget: pixel budget 'inf' must be a finite number",
    'models=': "-S models='' is not one of smallcnn, resnet50, vgg16",
    'epochs=1': '-S epochs=1 must be at least 2',
    'crop_size=300': '-S crop_size=300 must be at most -S image_size=256',
    'memory_limit_gib=-1': '-S memory_limit_gib=-1.0 must be a finite number above 0',
    'input_threads=-2': '-S input_threads=-2 must be at least 0',
}]
# The data fixture's: it failed, and the training tests that need it did not run.
REFUSED_DATA = {'seed=x': "-S seed='x' is not a whole number",
                'subdir=../../elsewhere': "-S subdir='../../elsewhere' must be one plain name"}


@pytest.mark.parametrize('refused', REFUSED)
def test_bad_settings_are_refused_naming_what_is_allowed(tmp_path, refused):
    proc = dry_run(tmp_path, *refused)
    assert proc.returncode != 0
    (reason,) = reasons(proc)
    for setting, message in refused.items():
        assert message in reason, (setting, reason)
    assert not glob.glob(str(tmp_path / 'stage' / '*' / '*' / '*' / 'TrainingTest_*'
                                        / 'rfm_job.sh'))


def test_bad_settings_of_the_data_fixture_are_refused(tmp_path):
    proc = dry_run(tmp_path, *REFUSED_DATA)
    assert proc.returncode != 0
    (reason,) = reasons(proc)
    for message in REFUSED_DATA.values():
        assert message in reason, reason


@pytest.mark.parametrize('text, on', [('no', False), ('True', True)])
def test_false_means_false(tmp_path, text, on):
    # ReFrame's plain bool took any text as True: jit_compile=no compiled with XLA.
    proc = dry_run(tmp_path, f'jit_compile={text}', f'prepare={text}')
    assert proc.returncode == 0, proc.stdout[-3000:]
    script = job_script(tmp_path)
    assert ('--jit-compile' in script) == on and ('--prepare' in script) == on


def test_a_path_with_shell_in_it_is_one_argument(tmp_path):
    path = "/tmp/a b;$(touch pwned) 'x'"
    proc = dry_run(tmp_path, f'data_dir={path}', f'stage_dir={path}')
    assert proc.returncode == 0, proc.stdout[-3000:]
    line = job_script(tmp_path).splitlines()[-1]
    args = shlex.split(line)
    assert args[args.index('--data-dir') + 1] == path
    assert args[args.index('--stage-dir') + 1] == path


def test_container_command_and_image_are_quoted(tmp_path):
    path = "/tmp/a b;'x'"
    image = '/images/ssb.sif; touch pwned'
    proc = dry_run(tmp_path, f'data_dir={path}', f'container_image={image}', config=APPTAINER)
    assert proc.returncode == 0, proc.stdout[-3000:]
    args = shlex.split(job_script(tmp_path).splitlines()[-1])
    assert image in args and args[args.index('--data-dir') + 1] == path


def test_container_mount_that_the_shell_would_expand_is_refused(tmp_path):
    proc = dry_run(tmp_path, 'data_dir=/tmp/$(touch pwned)', config=APPTAINER)
    assert proc.returncode != 0
    assert reasons(proc) == [("variable error: '/tmp/$(touch pwned)' cannot be mounted in a "
                             "container: '$' would be expanded by the shell")]


SITE_WITH_A_BAR = '''
site_configuration = {
    'systems': [{'name': 'probe', 'hostnames': ['.*'], 'partitions': [{
        'name': 'cpu', 'scheduler': 'local', 'launcher': 'local', 'environs': ['builtin'],
        'extras': {'mame_root': '/data|mame'}}]}],
    'environments': [{'name': 'builtin'}],
}
'''


def test_a_site_path_with_the_perflog_separator_is_refused(tmp_path):
    config = tmp_path / 'site.py'
    config.write_text(SITE_WITH_A_BAR)
    proc = run_reframe('--dry-run', '-n', 'TrainingTest.*lrfs.*single', cwd=tmp_path,
                       config=config, env={'RFM_COLORIZE': 'n'})
    assert proc.returncode != 0
    assert reasons(proc) == ["variable error: the partition's extras mame_root='/data|mame': "
                             "'|' separates the fields of the perflog; choose a value without it"]


# What the tests fill in is logged, never set: a value given is refused, naming what sets it.
OUTPUTS = {
    'batch_size=64': "-S batch_size='64': the test fills batch_size in; set lrfs_batch_size or "
                     "hrvs_batch_size instead",
    'timing_lock_wait_s=abc': "-S timing_lock_wait_s='abc': the test fills timing_lock_wait_s "
                              "in; set timing_lock instead",
    'dataset=mine': "-S dataset='mine': the test fills dataset in; set data_dir instead",
    'payload_version=9': "-S payload_version='9': the test fills payload_version in; it is the "
                         "installed payload's",
}


def test_an_output_set_by_hand_is_refused_naming_what_sets_it(tmp_path):
    proc = dry_run(tmp_path, *OUTPUTS)
    assert proc.returncode != 0
    (reason,) = reasons(proc)
    for message in OUTPUTS.values():
        assert message in reason, reason


def test_an_output_given_with_P_is_refused(tmp_path):
    proc = run_reframe('--dry-run', '-n', 'TrainingTest.*lrfs.*single', '-P',
                       'hardware_ratio=2,4', cwd=tmp_path, env={'RFM_COLORIZE': 'n'})
    assert proc.returncode != 0
    assert set(reasons(proc)) == {"variable error: -S hardware_ratio='2': the test fills "
                                  "hardware_ratio in; choose the scale instead (-n "
                                  "%scale=node)",
                                  "variable error: -S hardware_ratio='4': the test fills "
                                  "hardware_ratio in; choose the scale instead (-n "
                                  "%scale=node)"}


def test_hrvs_single_batching_takes_no_other_batch_size(tmp_path):
    """The payload refuses it; the test refuses it first, in the HR&VS run, the same way."""
    proc = dry_run(tmp_path, 'hrvs_batch_size=8', names='TrainingTest.*single')
    assert proc.returncode != 0
    assert reasons(proc) == ["variable error: -S hrvs_batching='single' trains at batch 1; use "
                             "padded or bucketed for -S hrvs_batch_size=8"]
    # The LR&FS run trains at lrfs_batch_size: HR&VS's batch size is none of its business.
    assert any('OK' in line and '%variant=lrfs' in line for line in proc.stdout.splitlines())


def test_padded_batching_trains_at_the_batch_size_asked_for(tmp_path):
    proc = dry_run(tmp_path, 'hrvs_batch_size=8', 'hrvs_batching=padded',
                   names='TrainingTest.*hrvs.*single')
    assert proc.returncode == 0, proc.stdout[-3000:]
    args = shlex.split(job_script(tmp_path).splitlines()[-1])
    assert args[args.index('--batch-size') + 1] == '8'
    assert args[args.index('--hrvs-batching') + 1] == 'padded'
