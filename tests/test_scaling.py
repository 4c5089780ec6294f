"""reframe_tests/scaling.py: the tasks, nodes and GPUs of each scale, on partitions that
ReFrame builds from a real site configuration."""
import pytest

from reframe_tests import scaling, site_keys
from reframe_tests.scaling import Layout
from ssb_common import reframe_private

CONFIG = '''
site_configuration = {
    'systems': [{
        'name': 'site', 'hostnames': ['.*'],
        'partitions': [
            {'name': 'laptop', 'scheduler': 'local', 'launcher': 'local',
             'environs': ['builtin']},
            {'name': 'laptop1', 'scheduler': 'local', 'launcher': 'local',
             'environs': ['builtin'], 'extras': {'cpu_workers_per_node': 1}},
            {'name': 'cpu', 'scheduler': 'slurm', 'launcher': 'srun', 'environs': ['builtin']},
            {'name': 'cpu4', 'scheduler': 'slurm', 'launcher': 'srun', 'environs': ['builtin'],
             'extras': {'nodes': 4, 'cpu_workers_per_node': 3}},
            {'name': 'gpu', 'scheduler': 'slurm', 'launcher': 'srun', 'environs': ['builtin'],
             'extras': {'nodes': 2},
             'devices': [{'type': 'gpu', 'num_devices': 3}, {'type': 'gpu', 'num_devices': 1},
                         {'type': 'fpga', 'num_devices': 8}]},
            {'name': 'gpu1', 'scheduler': 'slurm', 'launcher': 'srun', 'environs': ['builtin'],
             'devices': [{'type': 'gpu'}]},
        ]}],
    'environments': [{'name': 'builtin', 'cc': 'cc'}],
}
'''


@pytest.fixture(scope='module')
def partitions(tmp_path_factory):
    path = tmp_path_factory.mktemp('config') / 'site.py'
    path.write_text(CONFIG)
    return reframe_private.partitions(str(path), 'site')


def test_gpus_per_node_count_every_gpu_entry_and_only_gpus(partitions):
    assert scaling.gpus_per_node(partitions['gpu']) == 4
    assert scaling.gpus_per_node(partitions['gpu1']) == 1          # num_devices defaults to 1
    assert scaling.gpus_per_node(partitions['cpu']) == 0


@pytest.mark.parametrize('partition, scale, device, expected', [
    # The single scale: one task, one GPU or the CPUs of one node, wherever it runs.
    ('laptop', 'single', site_keys.CPU, Layout(1, 1, 0, 1)),
    ('cpu', 'single', site_keys.CPU, Layout(1, 1, 0, 1)),
    ('gpu', 'single', site_keys.GPU, Layout(1, 1, 1, 1)),
    ('gpu', 'single', site_keys.CPU, Layout(1, 1, 0, 1)),
    # GPUs: one task per node drives all of the node's GPUs.
    ('gpu', 'node', site_keys.GPU, Layout(1, 1, 4, 4)),
    ('gpu', '2nodes', site_keys.GPU, Layout(2, 1, 4, 8)),
    ('gpu1', 'node', site_keys.GPU, Layout(1, 1, 1, 1)),
    # CPUs: cpu_workers_per_node tasks per node (2 by default); the ratio counts nodes.
    ('cpu', 'node', site_keys.CPU, Layout(2, 2, 0, 1)),
    ('cpu4', 'node', site_keys.CPU, Layout(3, 3, 0, 1)),
    ('cpu4', '2nodes', site_keys.CPU, Layout(6, 3, 0, 2)),
    ('cpu4', '4nodes', site_keys.CPU, Layout(12, 3, 0, 4)),
    # One worker on one node runs under the local launcher.
    ('laptop1', 'node', site_keys.CPU, Layout(1, 1, 0, 1)),
])
def test_layout(partitions, partition, scale, device, expected):
    assert scaling.layout(scale, device, partitions[partition]) == expected


@pytest.mark.parametrize('partition, scale, device, message', [
    ('cpu', 'single', site_keys.GPU,
     'partition site:cpu has the gpu feature but no gpu devices'),
    ('cpu', 'node', site_keys.GPU, 'partition site:cpu has the gpu feature but no gpu devices'),
    ('cpu', '2nodes', site_keys.CPU,
     '2nodes needs 2 nodes; partition site:cpu has 1 (extras["nodes"])'),
    ('gpu', '4nodes', site_keys.GPU,
     '4nodes needs 4 nodes; partition site:gpu has 2 (extras["nodes"])'),
    ('laptop', 'node', site_keys.CPU,
     'node needs 2 tasks; the local launcher of site:laptop starts one'),
    ('laptop1', '2nodes', site_keys.CPU,
     '2nodes needs 2 nodes; partition site:laptop1 has 1 (extras["nodes"])'),
])
def test_what_cannot_run_says_why(partitions, partition, scale, device, message):
    with pytest.raises(ValueError) as err:
        scaling.layout(scale, device, partitions[partition])
    assert str(err.value) == message

