"""payload/distribute.py: the strategy from how the run was launched, Slurm's task layout and
ports, and each worker's share of the records. Real TensorFlow; no worker is started."""
import json
import os
import subprocess
import sys
import types

import pytest
import tensorflow as tf

from conftest import REPO
from payload import PayloadError, cli, distribute

LAUNCH_VARS = ('TF_CONFIG', 'SLURM_PROCID', 'SLURM_STEP_NUM_TASKS', 'SLURM_JOB_ID',
               'SLURM_STEP_ID', 'SLURM_STEP_NODELIST', 'SLURM_STEP_TASKS_PER_NODE',
               'OMPI_COMM_WORLD_SIZE', 'PMI_SIZE', 'PMIX_SIZE', 'CUDA_VISIBLE_DEVICES')


@pytest.fixture(autouse=True)
def no_launcher(monkeypatch):
    """A plain process: none of the launchers' variables of the shell pytest runs in."""
    for name in LAUNCH_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def tf_config(workers, index):
    return json.dumps({'cluster': {'worker': [f'localhost:{2000 + i}' for i in range(workers)]},
                       'task': {'type': 'worker', 'index': index}})


@pytest.mark.parametrize('env, expected', [
    ({}, (1, None)),
    ({'TF_CONFIG': tf_config(3, 0)}, (3, 'TF_CONFIG')),
    ({'TF_CONFIG': json.dumps({'cluster': {'chief': ['a:1'], 'worker': ['b:1', 'c:1']}})},
     (3, 'TF_CONFIG')),
    ({'SLURM_PROCID': '0', 'SLURM_STEP_NUM_TASKS': '4'}, (4, 'slurm')),
    ({'SLURM_PROCID': '0', 'SLURM_STEP_NUM_TASKS': '1'}, (1, 'slurm')),
    # TF_CONFIG says more than Slurm: it wins.
    ({'TF_CONFIG': tf_config(2, 1), 'SLURM_PROCID': '0', 'SLURM_STEP_NUM_TASKS': '4'},
     (2, 'TF_CONFIG')),
    # Inside a Slurm allocation but not a step (no srun): not Slurm's tasks.
    ({'SLURM_PROCID': '0'}, (1, None)),
    # MPI launchers say how many, not where: no cluster description.
    ({'OMPI_COMM_WORLD_SIZE': '4'}, (4, None)),
    ({'PMI_SIZE': '1', 'PMIX_SIZE': '6'}, (6, None)),
    ({'OMPI_COMM_WORLD_SIZE': '1'}, (1, None)),
])
def test_launched_tasks(no_launcher, env, expected):
    for name, value in env.items():
        no_launcher.setenv(name, value)
    assert distribute.launched_tasks() == expected


@pytest.mark.parametrize('job, step, base', [
    (None, None, 20000),
    ('123', None, 20000 + 123 * 7 * 10),
    ('123', '2', 20000 + (123 * 7 + 2) * 10),
    ('123', '', 20000 + 123 * 7 * 10),
    ('1000', '0', 20000 + (7000 % 4000) * 10),         # wraps within the range
])
def test_slurm_port_base(no_launcher, job, step, base):
    for name, value in (('SLURM_JOB_ID', job), ('SLURM_STEP_ID', step)):
        if value is not None:
            no_launcher.setenv(name, value)
    assert distribute.slurm_port_base() == base


def test_port_bases_of_jobs_stay_in_range_and_apart(no_launcher):
    bases = set()
    for job in range(4000):
        no_launcher.setenv('SLURM_JOB_ID', str(job))
        base = distribute.slurm_port_base()
        assert 20000 <= base and base + distribute.PORTS_PER_SLOT <= 60000
        bases.add(base)
    assert len(bases) == 4000          # 7 and 4000 are coprime: consecutive jobs never share


def test_slurm_tasks_lay_workers_out_by_node(no_launcher):
    for name, value in {'SLURM_PROCID': '3', 'SLURM_STEP_NUM_TASKS': '4', 'SLURM_JOB_ID': '123',
                        'SLURM_STEP_ID': '0', 'SLURM_STEP_NODELIST': 'n[01-02]',
                        'SLURM_STEP_TASKS_PER_NODE': '2(x2)'}.items():
        no_launcher.setenv(name, value)
    resolver = distribute.SlurmTasks(4, visible_gpus=2)
    port = 20000 + 123 * 7 * 10
    assert resolver.cluster_spec().as_dict() == {
        'worker': [f'n01:{port}', f'n01:{port + 1}', f'n02:{port}', f'n02:{port + 1}']}
    assert (resolver.task_type, resolver.task_id) == ('worker', 3)
    assert resolver.num_accelerators() == {'GPU': 2}              # the visible ones
    assert 'CUDA_VISIBLE_DEVICES' not in os.environ                 # Slurm binds the GPUs
    assert distribute.worker_of(types.SimpleNamespace(cluster_resolver=resolver)) == (3, 4)


def test_worker_of_a_tf_config_cluster(no_launcher):
    no_launcher.setenv('TF_CONFIG', tf_config(3, 2))
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    assert distribute.worker_of(types.SimpleNamespace(cluster_resolver=resolver)) == (2, 3)


def test_one_process_strategies():
    strategy, kind = distribute.make_strategy('default')
    assert kind == 'default' and strategy is tf.distribute.get_strategy()
    assert distribute.worker_of(strategy) == (0, 1)
    gpus = len(tf.config.list_physical_devices('GPU'))
    assert distribute.make_strategy('auto')[1] == ('mirrored' if gpus > 1 else 'default')
    mirrored, kind = distribute.make_strategy('mirrored')
    assert kind == 'mirrored' and isinstance(mirrored, tf.distribute.MirroredStrategy)
    assert mirrored.num_replicas_in_sync == max(gpus, 1)
    assert distribute.worker_of(mirrored) == (0, 1)


@pytest.mark.parametrize('env, kind, message', [
    ({'OMPI_COMM_WORLD_SIZE': '4'}, 'auto',
     '4 tasks launched without a cluster description: launch with srun, or set TF_CONFIG '
     'for each task'),
    ({'PMI_SIZE': '2'}, 'multi-worker',
     '2 tasks launched without a cluster description: launch with srun, or set TF_CONFIG '
     'for each task'),
    ({}, 'multi-worker',
     '1 tasks launched without a cluster description: launch with srun, or set TF_CONFIG '
     'for each task'),
    ({'SLURM_PROCID': '0', 'SLURM_STEP_NUM_TASKS': '2'}, 'mirrored',
     '--strategy mirrored runs one task, but 2 were launched'),
    ({'TF_CONFIG': tf_config(3, 0)}, 'default',
     '--strategy default runs one task, but 3 were launched'),
])
def test_strategies_that_do_not_fit_the_launch_are_refused(no_launcher, env, kind, message):
    for name, value in env.items():
        no_launcher.setenv(name, value)
    with pytest.raises(PayloadError) as err:
        distribute.make_strategy(kind)
    assert str(err.value) == message


@pytest.mark.parametrize('count, workers, per_step', [
    (29, 2, 4), (29, 2, 1), (29, 3, 4), (29, 2, 16), (28, 2, 14), (8, 3, 2), (5, 1, 2),
    (100, 4, 8), (3, 4, 1),
])
def test_shard_gives_every_worker_the_same_whole_steps(count, workers, per_step):
    records = list(range(count))
    shards = [distribute.shard(records, w, workers, per_step) for w in range(workers)]
    per_worker = count // workers
    if per_step > 1 and per_worker > per_step:
        per_worker = per_worker // per_step * per_step
    for w, mine in enumerate(shards):
        assert mine == list(range(w, count, workers))[:per_worker]    # interleaved, in order
    assert len({len(s) for s in shards}) == 1
    assert len(set().union(*map(set, shards))) == workers * per_worker   # disjoint


def test_shard_examples():
    records = list(range(29))
    assert distribute.shard(records, 0, 2, 4) == [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22]
    assert distribute.shard(records, 1, 2, 4) == [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23]
    assert len(distribute.shard(records, 1, 2, 1)) == 14
    # Fewer images than one step: kept (LR&FS is refused before; validation uses them).
    assert distribute.shard(records, 0, 2, 16) == list(range(0, 28, 2))
    assert distribute.shard([], 0, 1, 4) == []


@pytest.mark.parametrize('text', [
    '{"cluster": {"worker": ["a:1", "b:2"]',                       # cut short
    '[1]',
    '"worker"',
    '{"cluster": ["a:1"]}',
    '{"cluster": {"worker": "a:1,b:2"}}',
])
def test_a_malformed_tf_config_is_one_error(no_launcher, text):
    no_launcher.setenv('TF_CONFIG', text)
    with pytest.raises(PayloadError) as err:
        cli.parse_args(['--variant', 'lrfs', '--data-dir', 'x'])
    assert str(err.value).startswith('TF_CONFIG is not a JSON object with a "cluster" of task '
                                     'lists, as {"cluster": {"worker": ["host:port", ...]}, '
                                     '"task": {"type": "worker", "index": 0}}: ')
    assert str(err.value).endswith(repr(text))


def test_a_well_formed_tf_config_passes(no_launcher):
    no_launcher.setenv('TF_CONFIG', tf_config(2, 0))
    assert cli.parse_args(['--variant', 'lrfs', '--data-dir', 'x']).batches.variant == 'lrfs'


def test_a_malformed_tf_config_stops_the_payload_with_one_error_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in LAUNCH_VARS}
    env.update(TF_CONFIG='{"cluster": ', SSB_LOCK_DIR=str(tmp_path / 'locks'))
    proc = subprocess.run([sys.executable, '-m', 'payload', '--variant', 'lrfs', '--data-dir',
                           str(tmp_path)], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        'error: TF_CONFIG is not a JSON object with a "cluster" of task lists, as {"cluster": '
        '{"worker": ["host:port", ...]}, "task": {"type": "worker", "index": 0}}: '
        '\'{"cluster": \'']
