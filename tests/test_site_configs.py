"""Every ReFrame config in site_configs/ validates, selects tests by features and
writes job scripts with the site's scheduler, launcher, resources and modules
(test_site_config_checks.py: bad input, and the shared part).

ReFrame runs as users run it, in a subprocess, with ``--system`` (the sites'
host names do not match this machine). The sites' module systems are not
installed here, so ReFrame is told not to probe them
(``RFM_RESOLVE_MODULE_CONFLICTS=0``: it still writes the ``module load``
lines); the CI config runs against the real Lmod when this machine has it.
"""
import glob
import importlib.util
import json
import os
import re
import subprocess
import sys

import pytest
from conftest import REPO
from reframe_runs import REFRAME

SITE_DIR = os.path.join(REPO, 'site_configs')
COMMON = os.path.join(SITE_DIR, 'common.py')
LMOD_CMD = '/usr/share/lmod/lmod/libexec/lmod'
CHECKS = os.path.join(REPO, 'reframe_tests')
ALL_MODELS = 'models=smallcnn,resnet50,vgg16'

# The configs the issue asks for, and the system each one defines.
EXPECTED_SITES = {
    'cte_power': 'cte_power',
    'marenostrum4': 'marenostrum4',
    'cte_amd': 'cte_amd',
    'juwels_booster': 'juwels_booster',
    'pbs_example': 'pbs_example',
    'template': 'my_site',
    'ci': 'ci',
    'apptainer_example': 'apptainer_example',
    'charliecloud_example': 'charliecloud_example',
}
SITE_FILES = sorted(os.path.splitext(os.path.basename(p))[0]
                    for p in glob.glob(os.path.join(SITE_DIR, '*.py'))
                    if os.path.basename(p) != 'common.py')

# Set while every config is read, to check that account/QoS reach the job scripts.
TEST_ACCOUNT = 'ssb-test-budget'
TEST_QOS = 'ssb-test-qos'


def load_common():
    spec = importlib.util.spec_from_file_location('ssb_common_under_test', COMMON)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def use_real_lmod(site):
    return site == 'ci' and os.access(LMOD_CMD, os.X_OK)


def reframe(*args, home, site=None, env=None, timeout=120):
    """Run ``reframe`` with nothing of this user's ReFrame state or site variables."""
    full_env = {k: v for k, v in os.environ.items()
                if not k.startswith(('RFM_', 'SSB_', 'LMOD', 'MODULE', 'SBATCH_'))}
    full_env.update({
        'HOME': str(home),
        'RFM_SQLITE_DB_FILE': os.path.join(str(home), 'results.db'),
        'RFM_REPORT_FILE': os.path.join(str(home), 'report.json'),
        'RFM_PERFLOG_DIR': os.path.join(str(home), 'perflogs'),
        'RFM_COLORIZE': 'n',
        'SSB_ACCOUNT': TEST_ACCOUNT,
        'SSB_QOS': TEST_QOS,
    })
    if use_real_lmod(site):
        # From a plain shell (no LMOD_CMD, no MODULEPATH): ci.py must find Lmod
        # and its own module directory by itself.
        full_env['SSB_VENV'] = sys.prefix
    else:
        full_env['RFM_RESOLVE_MODULE_CONFLICTS'] = '0'
    full_env.update(env or {})
    return subprocess.run([REFRAME, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=full_env, cwd=str(home))


class Site:
    """One site config as ReFrame sees it (from ``--show-config``)."""

    def __init__(self, name, home):
        self.name = name
        self.file = os.path.join(SITE_DIR, f'{name}.py')
        self.system = EXPECTED_SITES.get(name) or self._system_from_file()
        self.home = home
        proc = self.run('--show-config')
        assert proc.returncode == 0, proc.stdout + proc.stderr
        self.config = json.loads(proc.stdout)
        (self.sysconfig,) = [s for s in self.config['systems'] if s['name'] == self.system]
        self.partitions = {p['name']: p for p in self.sysconfig['partitions']}
        self.environs = {e['name']: e for e in self.config['environments']}

    def _system_from_file(self):
        m = re.search(r"'name':\s*'(\w+)'", open(self.file).read())
        return m.group(1)

    def run(self, *args, env=None):
        return reframe('-C', self.file, '--system', self.system, *args,
                       home=self.home, site=self.name, env=env)

    @staticmethod
    def device(partition):
        return 'gpu' if 'gpu' in partition.get('features', []) else 'cpu'


@pytest.fixture(scope='module', params=SITE_FILES)
def site(request, tmp_path_factory):
    return Site(request.param, tmp_path_factory.mktemp(f'rfm-{request.param}'))


@pytest.fixture(scope='module')
def dry_run(site):
    prefix = os.path.join(str(site.home), 'dry')
    proc = site.run('-c', CHECKS, '--prefix', prefix, '--dry-run')
    return prefix, proc


def test_the_issue_configs_exist():
    assert set(EXPECTED_SITES) <= set(SITE_FILES)


def test_validates(site):
    """`--show-config` exits 0 (checked on load) and gives what the tests read."""
    assert site.system == EXPECTED_SITES.get(site.name, site.system)
    assert site.sysconfig['hostnames']
    assert {m['name'] for m in site.config['modes']} == {'acceptance'}   # defaults: no mode
    assert site.config['storage'][0]['enable'] is True
    for pname, part in site.partitions.items():
        where = f'{site.system}:{pname}'
        assert part['environs'], where
        for ename in part['environs']:
            assert ename != 'builtin', where
            assert 'tensorflow' in site.environs[ename]['features'], (where, ename)
        extras = part['extras']
        if site.name != 'ci':
            assert extras['peak_gflops_per_device'] > 0, where
        if part['scheduler'] == 'slurm' and site.name != 'ci':
            # Every Slurm site says how many CPUs its jobs get: whole nodes with all their
            # memory, or CPUs for each GPU.
            access = part['access']
            assert ('--exclusive' in access and '--mem=0' in access) != \
                any(a.startswith('--cpus-per-gpu=') for a in access), (where, access)
        resources = {r['name']: r['options'] for r in part['resources']}
        assert '_rfm_gpu' in resources and 'memory' in resources, where
        if site.device(part) == 'gpu':
            (gpus,) = [d for d in part['devices'] if d['type'] == 'gpu']
            assert gpus['num_devices'] >= 1, where
            assert extras['gpu_memory_gib'] > 0, where
        else:
            assert not [d for d in part.get('devices', []) if d['type'] == 'gpu'], where
    assert site.name != 'ci' or site.partitions['cpu']['max_jobs'] >= 2


def test_every_partition_lists_its_device_variants(site):
    proc = site.run('-c', CHECKS, '-S', ALL_MODELS, '-lC')
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # Listed at the top level, or under the SizeShapeGap that depends on it ('^TrainingTest').
    listed = set(re.findall(r'^\s*(?:- |\^)TrainingTest (.*?) /\w+ @(\w+):([\w-]+)\+(\w+)$',
                            proc.stdout, re.MULTILINE))
    assert {s for _, s, _, _ in listed} == {site.system}, proc.stdout
    assert {p for _, _, p, _ in listed} == set(site.partitions), proc.stdout
    for pname, part in site.partitions.items():
        cases = [dict(re.findall(r'%(\w+)=(\S+)', params))
                 for params, _, p, _ in listed if p == pname]
        # every variant x model, and only this partition's device
        assert {(c['variant'], c['model']) for c in cases} == {
            (v, m) for v in ('lrfs', 'hrvs') for m in ('smallcnn', 'resnet50', 'vgg16')}, pname
        assert {c['device'] for c in cases} == {site.device(part)}, (pname, cases)
        environs = {e for _, _, p, e in listed if p == pname}
        assert environs <= set(part['environs']), (pname, environs)


@pytest.mark.parametrize('site', ['ci', 'cte_power'], indirect=True)
def test_modes(site):
    """The modes come from common.py, the same for every site: a CPU and a GPU site suffice.
    Without a mode, the defaults are the smoke run."""
    smoke = site.run('-lC')
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    assert '%model=smallcnn' in smoke.stdout
    assert '%model=resnet50' not in smoke.stdout
    acceptance = site.run('--mode=acceptance', '-lC')
    assert acceptance.returncode == 0, acceptance.stdout + acceptance.stderr
    for model in ('smallcnn', 'resnet50', 'vgg16'):
        assert f'%model={model}' in acceptance.stdout


def _directives(script, prefix):
    return [line[len(prefix):].strip() for line in script.splitlines() if line.startswith(prefix)]


def test_dry_run_job_scripts(site, dry_run):
    prefix, proc = dry_run
    phases = re.findall(r'Failing phase: (\w+)', proc.stdout)
    assert not phases, proc.stdout[-5000:] + proc.stderr
    for pname, part in site.partitions.items():
        scripts = glob.glob(os.path.join(prefix, 'stage', site.system, pname, '*',
                                         'TrainingTest_*', 'rfm_job.sh'))
        assert scripts, (pname, proc.stdout[-3000:])
        for path in scripts:
            check_job_script(site, part, open(path).read(), path)


def check_job_script(site, part, script, path):
    where = f'{site.system}:{part["name"]} {path}'
    gpu = site.device(part) == 'gpu'
    access = part.get('access', [])
    if part['scheduler'] == 'slurm':
        sbatch = _directives(script, '#SBATCH')
        assert any(d.startswith('--job-name=') for d in sbatch), where
        for opt in access:
            assert opt in sbatch, (where, opt)
        gpu_requests = [d for d in sbatch if d.startswith('--gpus-per-node=')]
    elif part['scheduler'] == 'pbs':
        pbs = _directives(script, '#PBS')
        (select,) = [d for d in pbs if d.startswith('-l select=')]
        chunk = select[len('-l select='):].split(':')
        for opt in access:
            if opt.startswith('-'):
                assert opt in pbs, (where, opt)
            else:
                assert opt in chunk, (where, opt)
        gpu_requests = [c for c in chunk if c.startswith('ngpus=')]
    else:
        pytest.fail(f'{where}: no job script check for scheduler {part["scheduler"]}')
    # A GPU partition's job asks for 1 GPU, or all of a node's (data-parallel scales).
    if gpu:
        (request,) = gpu_requests
        num_devices = sum(d['num_devices'] for d in part['devices'] if d['type'] == 'gpu')
        assert int(request.split('=')[1]) in (1, num_devices), (where, request)
    else:
        assert not gpu_requests, where

    # The partition's preparation, the environment's modules in order, then
    # the launcher starts the payload.
    for cmd in part.get('prepare_cmds', []):
        assert cmd in script.splitlines(), (where, cmd)
    environ = next(site.environs[e] for e in part['environs'])
    loads = [line.split(None, 2)[2] for line in script.splitlines()
             if line.startswith('module load ')]
    assert loads == environ['modules'], where
    (payload,) = [line for line in script.splitlines() if ' -m payload ' in line]
    launch = {'srun': r'srun', 'mpirun': r'mpirun -np \d+',
              'mpiexec': r'mpiexec -n \d+'}[part['launcher']]
    image = part['extras'].get('container_image')
    runtime = [p['type'] for p in part.get('container_platforms', [])][:1]
    if image and runtime == ['Apptainer']:
        # In the partition's container: the stage directory as working directory, the
        # data directory bound at its own path, python3 from the image.
        data = re.search(r' --data-dir (\S+)', payload).group(1)
        assert re.match(rf'{launch} apptainer exec .*--pwd /rfm_workdir {re.escape(image)} '
                        rf'python3 -m payload ', payload), (where, payload)
        assert f'-B"{data}:{data}"' in payload, (where, payload)
    elif image:
        # Charliecloud's: the image's environment, the data directory at /mnt/0 (a
        # read-only image has no directory at the host's path), python3 from the image.
        assert runtime == ['Charliecloud'], where
        assert re.match(rf'{launch} ch-run --set-env .*--cd=/rfm_workdir {re.escape(image)} -- '
                        rf'python3 -m payload .*--data-dir /mnt/0 ', payload), (where, payload)
        assert re.search(r' --bind=\S+/mame:/mnt/0 ', payload), (where, payload)
        assert 'export USER="${USER:-$(id -un)}"' in script.splitlines(), where
    else:
        python = re.escape(environ['extras'].get('python', 'python3'))
        assert re.match(rf'{launch} {python} -m payload ', payload), (where, payload)
    if gpu and 'gpu_memory_gib' in part['extras']:
        assert f'--memory-limit-gib {part["extras"]["gpu_memory_gib"]}' in payload, where


@pytest.mark.parametrize('site', ['cte_power'], indirect=True)
def test_cte_power_gpu_job_uses_srun_and_gpus_per_node(site, dry_run):
    """The issue's own example: srun and --gpus-per-node on CTE-POWER's GPU partition."""
    prefix, proc = dry_run
    scripts = [open(p).read() for p in glob.glob(
        os.path.join(prefix, 'stage/cte_power/gpu/tensorflow/TrainingTest_*/rfm_job.sh'))]
    (script, *_) = [s for s in scripts if '#SBATCH --gpus-per-node=1\n' in s]
    assert '#SBATCH --account=ssb-test-budget' in script
    assert re.search(r'^srun python3 -m payload .*--memory-limit-gib 16$', script, re.MULTILINE)
    assert 'module load python/3.7.4_ML' in script
    assert 'Failing phase: run' not in proc.stdout
