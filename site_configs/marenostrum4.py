"""BSC MareNostrum 4 (general purpose block): 2x Intel Xeon Platinum 8160, CPU only (Slurm, srun).

    reframe -C site_configs/marenostrum4.py -r [--mode=acceptance]

Sources:
* BSC, "MareNostrum4 (2017) System Architecture",
  https://bsc.es/marenostrum/marenostrum/technical-information: 3,456 nodes
  with 2x Intel Xeon Platinum 8160 24C at 2.1 GHz; 3,240 nodes with 12x 8 GB
  DDR4-2667 (96 GB, 2 GB/core) and 216 nodes with 12x 32 GB (384 GB,
  8 GB/core); peak 11.15 Petaflops; SUSE Linux Enterprise Server 12 SP2.
* BSC's "MareNostrum 4 User's Guide" (not retrievable from this repository's
  build environment; as recalled, not re-checked): login through
  mn1/mn2/mn3.bsc.es (login nodes login1-login3), Slurm with srun, QoS
  ``debug`` and per-group ``bsc_*``, high-memory nodes selected with
  ``--constraint=highmem``, software through Environment Modules.
* Public job scripts for MareNostrum 4 load ``intel/2017.4 impi/2017.4
  mkl/2017.4`` (the default toolchain) and ``bsc/1.0``.
"""
import os

import reframe.utility as util


# ReFrame loads this file by path: load the shared part beside it the same way.
common = util.import_module_from_file(os.path.join(os.path.dirname(__file__), 'common.py'))

# fp32 peak of one node: BSC's 11.15 PF over 3,456 nodes is 3,226 GFLOP/s
# fp64 per node = 2 sockets x 24 cores x 2.1 GHz x 32 fp64 FLOP/cycle (two
# AVX-512 FMA units); fp32 doubles the lanes: 6,451 GFLOP/s. Nominal: AVX-512
# code runs below the 2.1 GHz base clock. On a CPU partition the "device" is
# the whole node, which the suite's one task uses.
NODE_PEAK_FP32_GFLOPS = 2 * 24 * 2.1 * 64

# Every partition: whole nodes (whole_nodes: --exclusive and all their memory), whatever
# the number of tasks per node the test runs (one, or one per socket for data-parallel
# scales), so that TensorFlow's thread pools get all 48 cores. Account/QoS from the
# environment: sites must set their own, e.g. export SSB_QOS=debug (BSC QoS names are
# per group).

PROCESSOR = {
    'arch': 'skylake_avx512',
    'num_cpus': 48,
    'num_cpus_per_core': 1,     # hyper-threading off: assumed, unverified
    'num_sockets': 2,
    'num_cpus_per_socket': 24,
}

site_configuration = common.site_configuration(
    systems=[{
        'name': 'marenostrum4',
        'descr': 'BSC MareNostrum 4, general purpose block (2x Xeon Platinum 8160)',
        'hostnames': [r'^login[1-3]$', r'^login[1-3]\.'],   # unverified: else --system=marenostrum4
        # Environment Modules per BSC's guide; ReFrame 4.10 needs >= 4.1
        # (the version on MareNostrum 4 is unverified here).
        'modules_system': 'envmod',
        'partitions': [
            common.slurm_partition(
                # 96 GB: 12x 8 GB, BSC technical information
                'cpu', '3,240 nodes, 2x Xeon Platinum 8160 (48 cores), 96 GB',
                features=['cpu', 'intel', 'x86_64', 'avx512'],
                whole_nodes=True,
                processor=PROCESSOR,
                extras={
                    'nodes': 3240,                      # BSC technical information
                    'peak_gflops_per_device': NODE_PEAK_FP32_GFLOPS,
                    # 'mame_root': no MAMe copy on GPFS known to us (synthetic data)
                },
            ),
            common.slurm_partition(
                # 384 GB: 12x 32 GB, BSC technical information
                'cpu-highmem', '216 nodes, 2x Xeon Platinum 8160 (48 cores), 384 GB',
                features=['cpu', 'intel', 'x86_64', 'avx512', 'highmem'],
                # The high-memory nodes, for HR&VS images that do not fit in 96 GB.
                access=['--constraint=highmem'],
                whole_nodes=True,
                processor=PROCESSOR,
                extras={
                    'nodes': 216,                       # BSC technical information
                    'peak_gflops_per_device': NODE_PEAK_FP32_GFLOPS,
                },
            ),
        ],
    }],
    environments=[
        common.tensorflow_environ(
            'tensorflow',
            # Unverified: no TensorFlow >= 2.16 module on MareNostrum 4 is
            # known to us. python/3.9.10 is the newest Python we have seen
            # referred to there; install this package with its [cpu] extra into
            # a virtualenv on GPFS (the nodes have no outbound internet: copy
            # the wheels in) and set SSB_PYTHON to its interpreter.
            modules=['python/3.9.10'],
            systems=['marenostrum4'],
        ),
    ],
)
