"""JSC JUWELS Booster: 4x NVIDIA A100 40 GB per node (Slurm, srun).

    reframe -C site_configs/juwels_booster.py -r [--mode=acceptance]

Sources:
* JSC's JUWELS documentation (https://apps.fz-juelich.de/jsc/hps/juwels/;
  not retrievable from this repository's build environment, figures as JSC
  publishes them, not re-checked here): 936 Booster nodes, each with 2x AMD
  EPYC 7402 (2x 24 cores, 2.8 GHz), 512 GB DDR4, 4x NVIDIA A100 with 40 GB
  HBM2e (NVLink 3), 4x HDR200 InfiniBand; Slurm, jobs started with srun;
  batch partitions ``booster`` and ``develbooster``; every job names its
  compute budget with ``--account``; software through Lmod in yearly
  "Stages".
* Public material: HiPACE++'s JUWELS Booster page (log in to
  juwels-booster.fz-juelich.de), job scripts using ``--partition=booster`` /
  ``develbooster`` with ``--account=<budget>``, and set-up scripts loading
  ``Stages/2024 GCC Python CUDA`` before making a virtualenv; compute node
  names like ``jwb0129``.
"""
import os

import reframe.utility as util


# ReFrame loads this file by path: load the shared part beside it the same way.
common = util.import_module_from_file(os.path.join(os.path.dirname(__file__), 'common.py'))

site_configuration = common.site_configuration(
    systems=[{
        'name': 'juwels_booster',
        'descr': 'JSC JUWELS Booster: 2x AMD EPYC 7402 + 4x NVIDIA A100 40 GB per node',
        # Booster login nodes (jwlogin2x) and compute nodes (jwbNNNN): the
        # login node names are unverified; else pass --system=juwels_booster.
        'hostnames': [r'^jwlogin2\d', r'^jwb\d{4}'],
        'modules_system': 'lmod',
        'partitions': [common.slurm_partition(
            # 512 GB of memory per node (JSC JUWELS Booster configuration).
            'gpu', 'booster: 2x EPYC 7402 (48 cores), 4x A100 40 GB, 512 GB',
            features=['gpu', 'nvidia', 'cuda', 'x86_64'],
            # Slurm partition 'booster' ('develbooster' for short test jobs).
            # A quarter of the node's 48 cores per GPU. JSC requires a budget:
            # export SSB_ACCOUNT=<your budget>.
            access=['--partition=booster'],
            cpus_per_gpu=12,
            user_access=[('--account={}', 'SSB_ACCOUNT')],
            max_jobs=8,
            # 'processor' left to ReFrame: whether SMT is on (48 or 96 CPUs
            # seen by Slurm) is unverified here.
            devices=[{'type': 'gpu', 'arch': 'sm_80',
                      'model': 'NVIDIA A100-SXM4-40GB', 'num_devices': 4}],
            extras={
                'nodes': 936,                   # JSC JUWELS Booster configuration
                'gpu_memory_gib': 40,           # A100 40 GB (same)
                # fp32 peak of an A100 (non-tensor-core): 19.5 TFLOP/s, NVIDIA
                # A100 datasheet (TF32 tensor cores: 156 TFLOP/s).
                'peak_gflops_per_device': 19500,
                # 'mame_root': no MAMe copy on JUST known to us (synthetic data)
            },
        )],
    }],
    environments=[
        common.tensorflow_environ(
            'tensorflow',
            # The modules a virtualenv-based set-up loads (see above); the
            # payload's TensorFlow >= 2.16 then comes from that virtualenv
            # (pip install .[gpu]); set SSB_PYTHON to its interpreter. A JSC
            # TensorFlow module in the current Stage is unverified here (check
            # with `module spider TensorFlow`) and would replace Python+venv.
            modules=['Stages/2024', 'GCC', 'Python', 'CUDA'],
            systems=['juwels_booster'],
            features=['cuda'],
        ),
    ],
)
