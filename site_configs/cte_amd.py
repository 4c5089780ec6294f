"""BSC CTE-AMD: AMD EPYC 7742 with 2x AMD Instinct MI50 32 GB per node (Slurm, srun).

    reframe -C site_configs/cte_amd.py -r [--mode=acceptance]

Sources:
* BSC's "CTE-AMD User's Guide" (not retrievable from this repository's build
  environment; figures as that guide gives them, not re-checked here): login
  node amdlogin1.bsc.es; 33 compute nodes with 1x AMD EPYC 7742 @ 2.25 GHz
  (64 cores, 2 hardware threads per core: 128 threads), 1 TB of main memory,
  2x AMD Radeon Instinct MI50 with 32 GB HBM2; Slurm.
* Public job scripts written for CTE-AMD load ``gcc/10.2.0 rocm/5.1.1
  python/3.9.1`` (some also ``bsc``, ``cmake/3.18.2``, ``mkl/2018.4``) with
  a virtualenv of their own, and ask for ``--gres=gpu:2 --cpus-per-task=128``
  (the whole node).
"""
import os

import reframe.utility as util


# ReFrame loads this file by path: load the shared part beside it the same way.
common = util.import_module_from_file(os.path.join(os.path.dirname(__file__), 'common.py'))

site_configuration = common.site_configuration(
    systems=[{
        'name': 'cte_amd',
        'descr': 'BSC CTE-AMD: AMD EPYC 7742 + 2x AMD Instinct MI50 32 GB per node',
        'hostnames': [r'^amdlogin\d'],     # unverified: else --system=cte_amd
        # Environment Modules per BSC's guides (version unverified; ReFrame
        # 4.10 needs >= 4.1). The `ml` shorthand seen in CTE-AMD scripts exists
        # in both Lmod and Environment Modules >= 4.5.
        'modules_system': 'envmod',
        'partitions': [common.slurm_partition(
            # 1 TB of memory per node (BSC CTE-AMD user's guide): jobs share nodes, and
            # take Slurm's default memory per CPU.
            'gpu', '1x EPYC 7742 (64 cores), 2x MI50 32 GB, 1 TB',
            features=['gpu', 'amd', 'rocm', 'x86_64'],
            # Half of the node's 128 hardware threads per GPU (the public
            # scripts take all 128 for 2 GPUs). Account/QoS: the user's own,
            # export SSB_ACCOUNT=... SSB_QOS=...
            cpus_per_gpu=64,
            max_jobs=4,
            processor={
                'arch': 'zen2',
                'num_cpus': 128,
                'num_cpus_per_core': 2,
                'num_sockets': 1,
                'num_cpus_per_socket': 128,
            },
            devices=[{'type': 'gpu', 'arch': 'gfx906',
                      'model': 'AMD Radeon Instinct MI50 32GB', 'num_devices': 2}],
            extras={
                'nodes': 33,                    # compute nodes, BSC CTE-AMD user's guide
                'gpu_memory_gib': 32,           # MI50 32 GB HBM2 (same guide)
                # fp32 peak of an MI50: 13.3 TFLOP/s, AMD Radeon Instinct MI50 datasheet.
                'peak_gflops_per_device': 13300,
                # 'mame_root': no MAMe copy on GPFS known to us (synthetic data)
            },
        )],
    }],
    environments=[
        common.tensorflow_environ(
            'tensorflow',
            modules=['gcc/10.2.0', 'rocm/5.1.1', 'python/3.9.1'],
            # No TensorFlow module is known to us on CTE-AMD: users install
            # tensorflow-rocm into their own virtualenv. The payload needs
            # TensorFlow >= 2.16 (Keras 3); whether such a tensorflow-rocm runs
            # on ROCm 5.1.1 there is unverified. Set SSB_PYTHON to the venv's
            # interpreter (see common.py).
            systems=['cte_amd'],
            features=['rocm'],
        ),
    ],
)
