"""A PBS Pro site: an example after NCAR's Derecho (PBS Pro, mpiexec).

    reframe -C site_configs/pbs_example.py -r [--mode=acceptance]

What differs from the Slurm sites: ``'scheduler': 'pbs'``; ReFrame writes one
``#PBS -l select=<nodes>:mpiprocs=<tasks>:ncpus=<cpus>`` line and appends every
access option or resource option that does not start with ``-`` to it (so
``ngpus=1`` and ``gpu_type=a100`` become chunk resources), while options that
start with ``-`` (``-q main``, ``-A <project>``) become lines of their own.

Sources (NCAR HPC documentation, ncar-hpc-docs.readthedocs.io; The Next
Platform, "AMD, Cray, Nvidia Behind Massive NCAR Supercomputer Upgrade", 2021):
Derecho is an HPE Cray EX system with PBS Pro, queue ``main`` (12 h limit,
``-l job_priority=regular|premium|economy``), 2,488 CPU nodes with 2x AMD EPYC
7763 (128 cores), and 82 GPU nodes with 4x NVIDIA A100 each; GPU chunks are
asked for with ``ngpus=N`` and ``gpu_type=a100``; MPI programs start with
``mpiexec`` (Cray PALS); software through Lmod. Node memory (256 GB CPU,
512 GB GPU), the GPU nodes' single EPYC 7763 and the A100s' 40 GB are as NCAR
documents them, but were not re-checked from this repository's build
environment.
"""
import os

import reframe.utility as util


# ReFrame loads this file by path: load the shared part beside it the same way.
common = util.import_module_from_file(os.path.join(os.path.dirname(__file__), 'common.py'))

# Queue and project for every job: NCAR requires a project (export
# SSB_ACCOUNT=<project code>); the queue is 'main'.
ACCESS = ['-q main', *common.access_from_env(('-A {}', 'SSB_ACCOUNT'))]

# fp32 peak of an EPYC 7763 node (CPU partition, whole node = the "device"):
# 2 sockets x 64 cores x 2.45 GHz base (AMD specification) x 32 fp32
# FLOP/cycle (Zen 3: two 256-bit FMA pipes) = 10,035 GFLOP/s; nominal.
CPU_NODE_PEAK_FP32_GFLOPS = 2 * 64 * 2.45 * 32

site_configuration = common.site_configuration(
    systems=[{
        'name': 'pbs_example',
        'descr': 'PBS Pro example after NCAR Derecho (EPYC 7763 CPU nodes, 4x A100 GPU nodes)',
        'hostnames': [r'^derecho\d'],       # Derecho's login nodes; unverified
        'modules_system': 'lmod',
        'partitions': [
            {
                'name': 'cpu',
                'descr': '2x EPYC 7763 (128 cores), 256 GB',
                'scheduler': 'pbs',
                'launcher': 'mpiexec',
                'access': ACCESS,
                'environs': ['tensorflow'],
                'features': ['cpu', 'amd', 'x86_64'],
                'processor': {'arch': 'zen3', 'num_cpus': 128, 'num_cpus_per_core': 1,
                              'num_sockets': 2, 'num_cpus_per_socket': 64},
                'resources': common.pbs_resources(),
                'extras': {
                    'nodes': 2488,                  # CPU nodes (The Next Platform, 2021)
                    'peak_gflops_per_device': CPU_NODE_PEAK_FP32_GFLOPS,
                },
            },
            {
                'name': 'gpu',
                'descr': '1x EPYC 7763 (64 cores), 4x A100 40 GB, 512 GB',
                'scheduler': 'pbs',
                'launcher': 'mpiexec',
                # gpu_type=a100 joins the select line: the A100 nodes.
                'access': [*ACCESS, 'gpu_type=a100'],
                'environs': ['tensorflow'],
                'features': ['gpu', 'nvidia', 'cuda', 'x86_64'],
                'devices': [{'type': 'gpu', 'arch': 'sm_80',
                             'model': 'NVIDIA A100-SXM4-40GB', 'num_devices': 4}],
                'resources': common.pbs_resources(),
                'extras': {
                    'nodes': 82,                    # GPU nodes (The Next Platform, 2021)
                    'gpu_memory_gib': 40,
                    # fp32 peak of an A100: 19.5 TFLOP/s, NVIDIA A100 datasheet.
                    'peak_gflops_per_device': 19500,
                },
            },
        ],
    }],
    environments=[
        common.tensorflow_environ(
            'tensorflow',
            # NCAR's documented way to Python is `module load conda`; a
            # TensorFlow >= 2.16 in one of NCAR's conda environments is
            # unverified: make your own (pip install .[gpu]) and set
            # SSB_PYTHON to its interpreter.
            modules=['conda'],
            systems=['pbs_example'],
        ),
    ],
)
