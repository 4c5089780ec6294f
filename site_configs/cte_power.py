"""BSC CTE-POWER: IBM Power9 nodes with 4x NVIDIA V100 16 GB (Slurm, srun).

    reframe -C site_configs/cte_power.py -r [--mode=acceptance]

Sources:
* BSC's "CTE-POWER User's Guide" (www.bsc.es/user-support/power.php; not
  retrievable from this repository's build environment, so the figures below
  are as that guide gives them and were not re-checked here): login nodes
  plogin1.bsc.es / plogin2.bsc.es; 52 compute nodes with 2x IBM Power9 8335-GTH
  @ 2.4 GHz (20 cores, 4 hardware threads per core: 160 threads per node),
  512 GB of main memory, 4x NVIDIA V100 (Volta) with 16 GB HBM2; Slurm.
* Public job scripts written for CTE-POWER (e.g. BSC's PATC deep-learning
  course material, jorditorresBCN/PATC-2021) all load the same ML module
  stack, ``module purge; module load gcc/8.3.0 cuda/10.2 cudnn/7.6.4
  nccl/2.4.8 tensorrt/6.0.1 openmpi/4.0.1 atlas/3.10.3 scalapack/2.0.2
  fftw/3.3.8 szip/2.1.1 ffmpeg/4.2.1 opencv/4.1.1 python/3.7.4_ML``, and ask
  for 40 CPUs per GPU (``--cpus-per-task=40`` with ``--gres=gpu:1``,
  ``-c 160`` with ``--gres=gpu:4``) under QoS ``debug`` or ``bsc_*``.
"""
import os

import reframe.utility as util


# ReFrame loads this file by path: load the shared part beside it the same way.
common = util.import_module_from_file(os.path.join(os.path.dirname(__file__), 'common.py'))

site_configuration = common.site_configuration(
    systems=[{
        'name': 'cte_power',
        'descr': 'BSC CTE-POWER: IBM Power9 + 4x NVIDIA V100 16 GB per node',
        # The login nodes' own host names (ssh plogin1.bsc.es lands on one);
        # unverified here: if autodetection fails, pass --system=cte_power.
        'hostnames': [r'^p9login\d', r'^plogin\d'],
        # BSC's guides describe the Environment Modules package; its version on
        # CTE-POWER is unverified here. ReFrame 4.10 supports Environment
        # Modules >= 4.1 ('envmod') and Lmod ('lmod').
        'modules_system': 'envmod',
        'partitions': [common.slurm_partition(
            # 512 GB of memory per node (BSC CTE-POWER user's guide): jobs share nodes,
            # and take Slurm's default memory per CPU.
            'gpu', '2x Power9 8335-GTH, 4x V100-SXM2 16 GB, 512 GB',
            features=['gpu', 'nvidia', 'cuda', 'ppc64le'],
            # 40 of the node's 160 hardware threads per GPU, as BSC's examples
            # request (they write --cpus-per-task=40 per --gres=gpu:1;
            # --cpus-per-gpu keeps the ratio for jobs that take all 4 GPUs).
            # Sites must set their own account/QoS:
            # export SSB_ACCOUNT=... SSB_QOS=debug|bsc_...
            cpus_per_gpu=40,
            max_jobs=4,
            processor={
                'arch': 'power9',
                'num_cpus': 160,            # 2 sockets x 20 cores x 4 threads
                'num_cpus_per_core': 4,
                'num_sockets': 2,
                'num_cpus_per_socket': 80,
            },
            devices=[{'type': 'gpu', 'arch': 'sm_70',
                      'model': 'NVIDIA Tesla V100-SXM2-16GB', 'num_devices': 4}],
            # BSC's examples ask for GPUs with --gres=gpu:N; --gpus-per-node
            # (common.slurm_resources) needs Slurm >= 19.05. If CTE-POWER's
            # Slurm rejects it, pass resources=[{'name': '_rfm_gpu',
            # 'options': ['--gres=gpu:{num_gpus_per_node}']}] instead.
            extras={
                'nodes': 52,                    # compute nodes, BSC CTE-POWER user's guide
                'gpu_memory_gib': 16,           # V100 16 GB HBM2 (same guide)
                # fp32 peak of a V100 SXM2 (NVLink, as in the AC922 8335-GTH):
                # 15.7 TFLOP/s, NVIDIA Tesla V100 datasheet.
                'peak_gflops_per_device': 15700,
                # No MAMe copy on GPFS is known to us: the tests make synthetic
                # data. Set 'mame_root' to a directory holding MAMe_dataset.csv
                # and the images to train on the real dataset.
            },
        )],
    }],
    environments=[
        common.tensorflow_environ(
            'tensorflow',
            modules=['gcc/8.3.0', 'cuda/10.2', 'cudnn/7.6.4', 'nccl/2.4.8',
                     'tensorrt/6.0.1', 'openmpi/4.0.1', 'atlas/3.10.3',
                     'scalapack/2.0.2', 'fftw/3.3.8', 'szip/2.1.1', 'ffmpeg/4.2.1',
                     'opencv/4.1.1', 'python/3.7.4_ML'],
            # python/3.7.4_ML is BSC's documented TensorFlow stack, but the
            # payload needs Python >= 3.9 and TensorFlow >= 2.16 (Keras 3), and
            # PyPI has no TensorFlow wheels for ppc64le. Whether a Keras-3
            # TensorFlow exists on CTE-POWER is unverified: if not, point the
            # suite at an interpreter that has one with SSB_PYTHON (see
            # common.py) or python='/gpfs/projects/<group>/<venv>/bin/python'.
            systems=['cte_power'],
            features=['cuda'],
        ),
    ],
)
