"""How many tasks, nodes and GPUs a scale asks for on a partition, or why it cannot run there.

Everything comes from the site configuration: GPUs from the partition's ``devices``,
the node count from ``extras['nodes']`` (default 1), CPU workers per node from
``extras['cpu_workers_per_node']`` (default 2: one per socket of a usual node).
"""
import dataclasses

from reframe.core.backends import getlauncher

from . import site_keys

SCALES = {'single': 1, 'node': 1, '2nodes': 2, '3nodes': 3, '4nodes': 4}   # scale -> nodes
# The tag of the scales that cross nodes (`reframe -t multinode`).
MULTINODE_TAG = 'multinode'


@dataclasses.dataclass(frozen=True)
class Layout:
    num_tasks: int
    num_tasks_per_node: int
    num_gpus_per_node: int
    # Hardware used relative to the 'single' scale: the ideal throughput ratio.
    hardware_ratio: int


def gpus_per_node(partition):
    return sum(d.num_devices for d in partition.select_devices('gpu'))


def layout(scale, device, partition):
    """The Layout of ``scale`` on ``partition``; raises ValueError with the reason it cannot run."""
    nodes = SCALES[scale]
    gpus = gpus_per_node(partition)
    if device == site_keys.GPU and gpus < 1:
        raise ValueError(f'partition {partition.fullname} has the gpu feature but no gpu devices')
    if scale == 'single':
        return Layout(1, 1, 1 if device == site_keys.GPU else 0, 1)
    available_nodes = int(partition.extras.get(site_keys.NODES, 1))
    if nodes > available_nodes:
        raise ValueError(f'{scale} needs {nodes} nodes; partition {partition.fullname} has '
                         f'{available_nodes} (extras["nodes"])')
    if device == site_keys.GPU:
        # One task per node drives all its GPUs (MirroredStrategy inside the task,
        # MultiWorkerMirroredStrategy across nodes).
        return Layout(nodes, 1, gpus, nodes * gpus)
    workers = int(partition.extras.get(site_keys.CPU_WORKERS_PER_NODE, 2))
    if nodes * workers > 1 and partition.launcher_type is getlauncher('local'):
        raise ValueError(f'{scale} needs {nodes * workers} tasks; the local launcher of '
                         f'{partition.fullname} starts one')
    return Layout(nodes * workers, workers, 0, nodes)
