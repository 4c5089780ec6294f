"""The scheduling recipes of docs/acceptance.md (scrontab, cron, systemd), as written: each
is checked by its own tool where one is here, and its command runs ssb-acceptance (dry)."""
import os
import re
import shlex
import shutil
import subprocess

import pytest

from conftest import CI_CONFIG, REPO
from test_acceptance_command import SSB_ACCEPTANCE
from test_slurm_cluster import cluster_env

RECIPES = os.path.join(REPO, 'docs', 'acceptance.md')


def recipe(kind):
    text = open(RECIPES).read()
    (block,) = re.findall(rf'^```{kind}\n(.*?)^```$', text, flags=re.S | re.M)
    return block


def localise(text, tmp_path):
    """The recipe with this checkout, this virtualenv, the CI site and a private directory."""
    return (text.replace('/opt/size-shape-bench/.venv/bin/ssb-acceptance', SSB_ACCEPTANCE)
            .replace(' .venv/bin/ssb-acceptance', ' ' + SSB_ACCEPTANCE)
            .replace('/opt/size-shape-bench', REPO)
            .replace('site_configs/mysite.py', os.path.relpath(CI_CONFIG, REPO))
            .replace('/shared/ssb-acceptance', str(tmp_path / 'out')))


CRON_FIELD = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]


def cron_command(line):
    """The command of a crontab line, after checking its five schedule fields."""
    fields = line.split(None, 5)
    assert len(fields) == 6, line
    for field, (low, high) in zip(fields[:5], CRON_FIELD):
        for part in field.split(','):
            base, _, step = part.partition('/')
            assert not step or step.isdigit(), field
            if base == '*':
                continue
            ends = base.split('-')
            assert all(e.isdigit() and low <= int(e) <= high for e in ends), field
    return fields[5]


def dry_run(command, tmp_path, env):
    """Run a recipe's command as written, with --dry-run added to ssb-acceptance."""
    command = command.replace(SSB_ACCEPTANCE, f'{SSB_ACCEPTANCE} --dry-run', 1)
    (tmp_path / 'out').mkdir(exist_ok=True)
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(('RFM_', 'SSB_'))}
    proc = subprocess.run(['bash', '-c', command], env={**full_env, **env}, capture_output=True,
                          text=True, timeout=600)
    return proc


def test_scrontab_recipe(slurm, tmp_path):
    lines = localise(recipe('scrontab'), tmp_path).strip().splitlines()
    options = [shlex.split(line)[1] for line in lines if line.startswith('#SCRON')]
    (entry,) = [line for line in lines if not line.startswith('#')]
    # The options, as Slurm reads them, on the CI cluster (scrontab takes sbatch's options).
    test_only = subprocess.run(['sbatch', '--test-only', *options, '--wrap', 'true'],
                               capture_output=True, text=True)
    assert test_only.returncode == 0, test_only.stderr
    assert 'to start at' in test_only.stderr
    proc = dry_run(cron_command(entry), tmp_path, cluster_env(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'acceptance on ci: DRY RUN (exit 0)' in proc.stdout


def test_cron_recipe(slurm, tmp_path):
    lines = localise(recipe('crontab'), tmp_path).strip().splitlines()
    assert re.fullmatch(r'MAILTO=\S+@\S+', lines[0])
    proc = dry_run(cron_command(lines[1]), tmp_path, cluster_env(tmp_path))
    # Silent on success (cron mails only what is printed); the output is kept.
    assert proc.returncode == 0 and proc.stdout == '', proc.stdout + proc.stderr
    assert 'DRY RUN (exit 0)' in (tmp_path / 'out' / 'last-run.txt').read_text()


def test_systemd_recipe(slurm, tmp_path):
    if shutil.which('systemd-analyze') is None:
        pytest.skip('no systemd-analyze here (apt-get install systemd)')
    units = {}
    for kind in ('systemd-service', 'systemd-timer'):
        text = localise(recipe(kind), tmp_path)
        name = text.splitlines()[0].lstrip('# ').strip()
        units[name] = tmp_path / name
        units[name].write_text(text)
    verify = subprocess.run(['systemd-analyze', 'verify', *map(str, units.values())],
                            capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    service = units['ssb-acceptance.service'].read_text()
    workdir = re.search(r'^WorkingDirectory=(.*)$', service, flags=re.M).group(1)
    command = re.search(r'^ExecStart=(.*)$', service, flags=re.M).group(1)
    proc = dry_run(f'cd {workdir} && {command}', tmp_path, cluster_env(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
