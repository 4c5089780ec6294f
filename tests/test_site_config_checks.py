"""Bad site configurations stop ReFrame with an error that names the bad key, launcher or
scheduler; and the part every site shares (site_configs/common.py): perflog handlers, the
Slurm partition helper, scheduler access, the perflog's fields and the container digest."""
import glob
import json
import os
import sys

import pytest

from test_site_configs import COMMON, REPO, SITE_DIR, TEST_ACCOUNT, load_common, reframe

# -- bad input --------------------------------------------------------------

def bad_config(tmp_path, site, old, new):
    """A copy of site_configs/<site>.py with one edit, loading the real common.py."""
    text = open(os.path.join(SITE_DIR, f'{site}.py')).read()
    assert old in text, old
    text = text.replace(old, new, 1).replace(
        "os.path.join(os.path.dirname(__file__), 'common.py')", repr(COMMON))
    path = tmp_path / f'bad_{site}.py'
    path.write_text(text)
    return path


@pytest.mark.parametrize('site, old, new, message', [
    ('pbs_example', "'launcher': 'mpiexec'", "'launchr': 'mpiexec'",
     "partition 'pbs_example:cpu': unknown key 'launchr' (did you mean 'launcher'?)"),
    ('ci', "features=['cpu']", "featurs=['cpu']",
     "partition 'ci:cpu': unknown key 'featurs' (did you mean 'features'?)"),
    ('cte_power', "'num_devices': 4", "'num_device': 4",
     "partition 'cte_power:gpu', devices: unknown key 'num_device' (did you mean 'num_devices'?)"),
    # ReFrame takes any extras; the tests read these names only (reframe_tests/site_keys.py).
    ('cte_power', "'gpu_memory_gib': 16", "'gpu_memory_gb': 16",
     "partition 'cte_power:gpu', extras: unknown key 'gpu_memory_gb' (did you mean "
     "'gpu_memory_gib'?)"),
])
def test_typo_in_a_key_is_named(tmp_path, site, old, new, message):
    proc = reframe('-C', bad_config(tmp_path, site, old, new), '--system', site,
                   '--show-config', home=tmp_path, site=site)
    assert proc.returncode != 0
    output = proc.stdout + proc.stderr
    assert 'ERROR: failed to load configuration' in output, output
    assert message in output, output


def test_typo_in_an_environment_key_is_named(tmp_path):
    path = bad_config(tmp_path, 'ci', '    environments=[\n',
                      "    environments=[\n        {'name': 'cpu-env', 'modules_': []},\n")
    proc = reframe('-C', path, '--show-config', home=tmp_path, site='ci')
    assert proc.returncode != 0
    assert "environment 'cpu-env': unknown key 'modules_' (did you mean 'modules'?)" \
        in proc.stdout + proc.stderr


@pytest.mark.parametrize('site, partition, old, new', [
    ('ci', 'cpu', 'max_jobs=2 * NODES,', "max_jobs=2 * NODES, launcher='no-such-launcher',"),
    ('pbs_example', 'cpu', "'launcher': 'mpiexec'", "'launcher': 'no-such-launcher'")])
def test_unknown_launcher_is_named(tmp_path, site, partition, old, new):
    path = bad_config(tmp_path, site, old, new)
    proc = reframe('-C', path, '--system', site, '-l', home=tmp_path, site=site)
    assert proc.returncode != 0
    output = proc.stdout + proc.stderr
    assert f"partition '{site}:{partition}': unknown launcher 'no-such-launcher'" in output, output
    assert 'srun' in output.split('unknown launcher', 1)[1]     # lists the ones ReFrame knows


def test_unknown_scheduler_is_named(tmp_path):
    path = bad_config(tmp_path, 'pbs_example', "'scheduler': 'pbs',",
                      "'scheduler': 'pbspro2',")
    proc = reframe('-C', path, '--system', 'pbs_example', '-l', home=tmp_path)
    assert proc.returncode != 0
    assert ("partition 'pbs_example:cpu': unknown scheduler 'pbspro2' (did you mean 'pbspro'?)"
            in proc.stdout + proc.stderr)


# -- the shared part ----------------------------------------------------------

def test_perflog_handlers_http_off_by_default():
    common = load_common()
    (filelog,) = common.perflog_handlers(environ={})
    assert filelog['type'] == 'filelog'
    assert filelog['format'] == '%(check_result)s|%(check_job_completion_time)s|%(check_#ALL)s'
    for key in ('check_variant', 'check_model', 'check_batch_size', 'check_dataset',
                'check_tensorflow_version', 'check_jobid', 'check_job_nodelist'):
        assert key not in filelog['ignore_keys']


def test_perflog_http_handler_from_environment():
    common = load_common()
    handlers = common.perflog_handlers(environ={
        'SSB_PERFLOG_HTTP_URL': 'http://elastic.example.org:9200/ssb/_doc',
        'SSB_PERFLOG_HTTP_AUTH': 'ApiKey abc'})
    (http,) = [h for h in handlers if h['type'] == 'httpjson']
    assert http['url'] == 'http://elastic.example.org:9200/ssb/_doc'
    assert http['extra_headers'] == {'Authorization': 'ApiKey abc'}
    assert http['debug'] is False


def test_slurm_partition_asks_for_the_cpus_and_memory_it_is_given(monkeypatch):
    common = load_common()
    whole = common.slurm_partition('cpu', 'CPU nodes', features=['cpu'], whole_nodes=True,
                                   access=['--partition=cpu'], user_access=(), max_jobs=4)
    assert whole == {'name': 'cpu', 'descr': 'CPU nodes', 'scheduler': 'slurm',
                     'launcher': 'srun',
                     'access': ['--partition=cpu', '--no-requeue', '--exclusive', '--mem=0'],
                     'environs': ['tensorflow'], 'features': ['cpu'],
                     'resources': common.slurm_resources(), 'max_jobs': 4}
    gpu = common.slurm_partition('gpu', 'GPU nodes', features=['gpu'], cpus_per_gpu=12,
                                 memory_per_node_gib=120, user_access=())
    assert gpu['access'] == ['--no-requeue', '--cpus-per-gpu=12', '--mem=120G']
    # The user's account and QoS, from the environment when the file is read.
    monkeypatch.setenv('SSB_ACCOUNT', TEST_ACCOUNT)
    monkeypatch.delenv('SSB_QOS', raising=False)
    assert common.slurm_partition('cpu', 'x', features=[])['access'] == [
        '--no-requeue', f'--account={TEST_ACCOUNT}']


def test_access_from_env():
    common = load_common()
    pairs = (('--account={}', 'SSB_ACCOUNT'), ('--qos={}', 'SSB_QOS'))
    assert common.access_from_env(*pairs, environ={}) == []
    assert common.access_from_env(*pairs, environ={'SSB_QOS': 'debug'}) == ['--qos=debug']


PROBE_CHECK = '''
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, performance_function, sanity_function, variable


@rfm.simple_test
class PerflogProbe(rfm.RunOnlyRegressionTest):
    """Stands in for TrainingTest: the same kind of loggable variables, one perf variable."""
    variant = parameter(['lrfs'])
    model = variable(str, value='smallcnn')
    batch_size = variable(int, value=16)
    dataset = variable(str, value='synthetic-mame')
    tensorflow_version = variable(str, value='9.9.9')
    valid_systems = ['+cpu']
    valid_prog_environs = ['+tensorflow']
    executable = 'echo'
    executable_opts = ['throughput=12.5']

    @sanity_function
    def ran(self):
        return sn.assert_found('throughput', self.stdout)

    @performance_function('img/s')
    def throughput(self):
        return sn.extractsingle(r'throughput=(\\S+)', self.stdout, 1, float)
'''

PROBE_CONFIG = '''
import importlib.util
spec = importlib.util.spec_from_file_location('ssb_common_probe', {common!r})
common = importlib.util.module_from_spec(spec)
spec.loader.exec_module(common)

site_configuration = common.site_configuration(
    systems=[{{'name': 'probe', 'hostnames': ['.*'],
               'partitions': [{{'name': 'cpu', 'scheduler': 'local', 'launcher': 'local',
                               'environs': ['tensorflow'], 'features': ['cpu'],
                               'resources': common.slurm_resources()}}]}}],
    environments=[common.tensorflow_environ('tensorflow', systems=['probe'])],
)
'''


def test_perflog_records_carry_the_test_variables(tmp_path):
    """One run through the shared logging config: a file record and an httpjson document."""
    (tmp_path / 'probe_check.py').write_text(PROBE_CHECK)
    (tmp_path / 'probe_config.py').write_text(PROBE_CONFIG.format(common=COMMON))
    proc = reframe('-C', tmp_path / 'probe_config.py', '-c', tmp_path / 'probe_check.py', '-r',
                   home=tmp_path, env={'SSB_PERFLOG_HTTP_URL': 'http://127.0.0.1:9/ssb/_doc',
                                       'SSB_PERFLOG_HTTP_DEBUG': '1',
                                       'RFM_RESOLVE_MODULE_CONFLICTS': '0'})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (perflog,) = glob.glob(str(tmp_path / 'perflogs/probe/cpu/PerflogProbe.log'))
    header, record, *rest = open(perflog).read().splitlines()
    assert not rest                                     # one record per test
    fields = dict(zip(header.split('|'), record.split('|')))
    assert fields['result'] == 'pass'
    for key, value in [('variant', 'lrfs'), ('model', 'smallcnn'), ('batch_size', '16'),
                       ('dataset', 'synthetic-mame'), ('tensorflow_version', '9.9.9'),
                       ('throughput_value', '12.5'), ('throughput_unit', 'img/s')]:
        assert fields[key] == value, (key, fields)
    for key in ('job_completion_time', 'jobid', 'job_nodelist', 'system', 'partition',
                'environ'):
        assert key in fields, (key, fields)
    assert 'valid_systems' not in fields and 'executable' not in fields

    (dump,) = glob.glob(str(tmp_path / 'httpjson_record_*.json'))
    doc = json.load(open(dump))
    assert doc['facility'] == 'size-shape-bench'
    assert doc['check_variant'] == 'lrfs' and doc['check_model'] == 'smallcnn'
    assert doc['check_perf_throughput_value'] == 12.5
    assert 'check_valid_systems' not in doc


def test_container_image_digest(tmp_path):
    sys.path.insert(0, REPO)
    from reframe_tests import in_image
    image = tmp_path / 'ssb.sif'
    image.write_bytes(b'not really an image')
    assert in_image.image_digest(str(image)) == (
        'sha256:' + __import__('hashlib').sha256(b'not really an image').hexdigest())
    assert in_image.image_digest('docker.io/me/ssb@sha256:abc123') == 'sha256:abc123'
    assert in_image.image_digest('docker://me/ssb:latest').startswith('unknown: ')
