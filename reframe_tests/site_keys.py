"""The names a site configuration gives the tests, one home for each (as EESSI's
constants): partition and environment features, and the ``extras`` keys the tests read.
site_configs/common.py refuses a site file whose extras hold any other key, naming the
closest one."""

# Partition features: the GPU tests run on partitions with GPU, the CPU tests on the others.
GPU = 'gpu'
CPU = 'cpu'
# Environment feature: the environments the tests run the payload in.
TENSORFLOW = 'tensorflow'

# Partition extras, all optional.
MAME_ROOT = 'mame_root'
LOCAL_SCRATCH = 'local_scratch'
GPU_MEMORY_GIB = 'gpu_memory_gib'
PEAK_GFLOPS_PER_DEVICE = 'peak_gflops_per_device'
NODES = 'nodes'
CPU_WORKERS_PER_NODE = 'cpu_workers_per_node'
CONTAINER_IMAGE = 'container_image'
PARTITION_EXTRAS = {
    MAME_ROOT: 'the real MAMe (a directory, or a packed or prepared HDF5 file); absent: '
               'synthetic data',
    LOCAL_SCRATCH: 'node-local storage to stage the images to before training',
    GPU_MEMORY_GIB: 'memory of one GPU: the payload\'s memory limit on GPUs',
    PEAK_GFLOPS_PER_DEVICE: 'fp32 peak of one GPU, or of a CPU node\'s CPUs: peak_fraction',
    NODES: 'nodes of the partition (default 1): the multi-node scales run only where they fit',
    CPU_WORKERS_PER_NODE: 'data-parallel CPU workers per node at the multi-worker scales '
                          '(default 2)',
    CONTAINER_IMAGE: 'the image the payload runs in (ReFrame container_platform)',
}

# Environment extras.
PYTHON = 'python'
ENVIRON_EXTRAS = {PYTHON: 'the interpreter that runs the payload (default: python3 on PATH)'}
