"""Which tf.distribute strategy a run uses, from how it was launched.

- several launcher tasks (srun -n N): MultiWorkerMirroredStrategy, its cluster
  resolved from Slurm's environment (SlurmClusterResolver) or from TF_CONFIG;
- one task with several GPUs: MirroredStrategy over them;
- otherwise TensorFlow's default strategy (one device).
No hand-written all-reduce: gradients are reduced by the strategy.
"""
import json
import os

import tensorflow as tf

from payload import PayloadError

# Workers of one job listen on port_base + local task index; deriving the base from
# the job id keeps concurrent jobs on one node from taking each other's ports.
PORT_RANGE_START, PORT_RANGE_SLOTS, PORTS_PER_SLOT = 20000, 4000, 10


def launched_tasks():
    """(tasks in this launch, how they are described) from the launcher's environment."""
    if os.environ.get('TF_CONFIG'):
        cluster = json.loads(os.environ['TF_CONFIG']).get('cluster', {})
        return sum(len(v) for v in cluster.values()), 'TF_CONFIG'
    if 'SLURM_PROCID' in os.environ and 'SLURM_STEP_NUM_TASKS' in os.environ:
        return int(os.environ['SLURM_STEP_NUM_TASKS']), 'slurm'
    for rank_size in ('OMPI_COMM_WORLD_SIZE', 'PMI_SIZE', 'PMIX_SIZE'):
        if int(os.environ.get(rank_size, '1')) > 1:
            return int(os.environ[rank_size]), None
    return 1, None


class SlurmTasks(tf.distribute.cluster_resolver.SlurmClusterResolver):
    """Slurm's task layout for the workers; each task drives the GPUs it sees.

    TensorFlow's resolver pairs tasks with GPU slots (none on a CPU node) and
    would set CUDA_VISIBLE_DEVICES itself; here Slurm binds the GPUs, so the
    slots are only placeholders and the accelerators are the visible ones.
    """

    def __init__(self, tasks, visible_gpus):
        self._visible_gpus = visible_gpus
        super().__init__(port_base=slurm_port_base(), gpus_per_node=tasks, gpus_per_task=1,
                         auto_set_gpu=False)

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        return {'GPU': self._visible_gpus}


def slurm_port_base():
    job = (int(os.environ.get('SLURM_JOB_ID', '0')) * 7
           + int(os.environ.get('SLURM_STEP_ID', '0') or 0))
    return PORT_RANGE_START + (job % PORT_RANGE_SLOTS) * PORTS_PER_SLOT


def make_strategy(kind):
    tasks, source = launched_tasks()
    if kind == 'auto':
        gpus = len(tf.config.list_physical_devices('GPU'))
        kind = 'multi-worker' if tasks > 1 else 'mirrored' if gpus > 1 else 'default'
    if kind == 'multi-worker':
        if source is None:
            raise PayloadError(f'{tasks} tasks launched without a cluster description: '
                               'launch with srun, or set TF_CONFIG for each task')
        if source == 'slurm':
            resolver = SlurmTasks(tasks, len(tf.config.list_physical_devices('GPU')))
        else:
            resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
        try:
            return tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=resolver), kind
        except tf.errors.UnknownError as err:      # how TensorFlow says its server failed
            from payload.train import describe_error
            address = resolver.cluster_spec().task_address(resolver.task_type, resolver.task_id)
            raise PayloadError(f'worker {resolver.task_id} of {tasks} could not start its server '
                               f'at {address} (is its port in use?): {describe_error(err)}'
                               ) from None
    if tasks > 1:
        raise PayloadError(f'--strategy {kind} runs one task, but {tasks} were launched')
    if kind == 'mirrored':
        return tf.distribute.MirroredStrategy(), kind
    return tf.distribute.get_strategy(), kind


def worker_of(strategy):
    """(this worker's index, number of workers)."""
    resolver = getattr(strategy, 'cluster_resolver', None)
    if resolver is None or not resolver.cluster_spec().as_dict():
        return 0, 1
    return resolver.task_id, resolver.cluster_spec().num_tasks('worker')


def shard(records, worker, workers, per_step):
    """This worker's records: every worker gets the same count, a multiple of ``per_step``.

    Collective all-reduce needs every worker to take the same number of steps, so
    the remainder (fewer than workers x per_step images) is left out and reported.
    """
    per_worker = len(records) // workers
    if per_step > 1 and per_worker > per_step:
        per_worker -= per_worker % per_step
    return records[worker::workers][:per_worker]
