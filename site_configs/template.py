"""Template: size-shape-bench on a new site. Copy, rename, fill in.

    cp site_configs/template.py site_configs/<mysite>.py
    # edit it, then check it without running anything:
    reframe -C site_configs/<mysite>.py --show-config
    reframe -C site_configs/<mysite>.py -lC                  # which tests run where
    reframe -C site_configs/<mysite>.py --dry-run --prefix /tmp/ssb-dry
    #   ... and read /tmp/ssb-dry/stage/<system>/<partition>/tensorflow/*/rfm_job.sh
    reframe -C site_configs/<mysite>.py -r                   # the smoke run

The tests never name a system: a site adopts the suite with a config alone.
What the tests take from this file:

* ``features`` of a partition select the tests that run there. The GPU
  variant of a test (``%device=gpu``) runs only on partitions with the
  ``gpu`` feature; the CPU variant only on partitions *without* it. So a
  GPU partition runs the GPU tests, a CPU partition the CPU tests; to run
  CPU tests on GPU nodes too, add a second partition without ``gpu`` for them.
  Other features (``cpu``, the vendor: ``nvidia``, ``amd``, ``intel``, ...)
  are for your own ``--system``/``-x`` filtering and for future tests.
* ``environs`` of a partition must name only environments with the
  ``tensorflow`` feature (made with ``common.tensorflow_environ``): the tests
  ask for ``+tensorflow``. (ReFrame's ``builtin`` environment is for its own
  ``generic`` system; do not list it here.)
* ``devices``: ``[{'type': 'gpu', 'arch': ..., 'num_devices': N}]``, the GPUs
  of one node; tests that scale over GPUs read N from here.
* ``resources``: ``common.slurm_resources()`` (or ``pbs_resources()``) defines
  ``_rfm_gpu``, the resource ReFrame maps a test's ``num_gpus_per_node`` to.
  The GPU tests set it, so the job script of a GPU partition asks for its
  GPUs with ``--gpus-per-node=N`` (PBS: ``ngpus=N``). If your scheduler wants
  ``--gres=gpu:N`` instead, write your own ``_rfm_gpu`` entry.
* ``extras`` of a partition, each optional:
    ``mame_root``               directory of the real MAMe dataset
                                (``MAMe_dataset.csv`` and the images); absent:
                                the suite makes a synthetic MAMe-like dataset.
    ``gpu_memory_gib``          memory of one GPU; passed to the payload as its
                                memory limit.
    ``memory_per_node_gib``     memory of one node, for reading memory results.
    ``peak_gflops_per_device``  fp32 peak of one GPU (GPU partitions) or of the
                                whole node's CPUs (CPU partitions, where the one
                                task uses the node); say where it comes from.
    ``nodes``                   nodes of the partition (default 1); the
                                data-parallel scales ``2nodes``/``4nodes`` run
                                only where there are that many.
    ``cpu_workers_per_node``    data-parallel CPU workers (tasks) per node at
                                the multi-worker scales (default 2, one per
                                socket).
* ``extras`` of an environment: ``python``, the interpreter that runs the
  payload (default ``python3`` from PATH after the modules are loaded, or
  ``$SSB_PYTHON`` if set when ReFrame starts).
* ``access``: scheduler options for every job of the partition (partition,
  QoS, constraint, CPUs). Never write a person's account here: use
  ``common.access_from_env(('--account={}', 'SSB_ACCOUNT'))`` so each user
  exports their own.

The shared part (perflog format, httpjson handler, results database, the
``acceptance`` mode) comes from ``site_configs/common.py``;
a site file holds only what differs. ``common.site_configuration`` also
checks every key: a misspelt key or an unknown scheduler/launcher stops
ReFrame with an error that names it.

Every figure below is a placeholder: replace it with your site's, and say in a
comment where it comes from (the centre's user guide, a datasheet, ...).
"""
import os

import reframe.utility as util

# ReFrame loads this file by path: load the shared part beside it the same way.
# Keep this line as it is.
common = util.import_module_from_file(os.path.join(os.path.dirname(__file__), 'common.py'))

site_configuration = common.site_configuration(
    systems=[{
        # Used in --system=<name>, in perflog paths and in references.
        'name': 'my_site',
        'descr': 'My site (template: replace every placeholder)',
        # Regular expressions matched against the host name ReFrame runs on
        # (the login node); with no match, pass --system=my_site.
        'hostnames': [r'^mylogin\d+$'],
        # 'lmod', 'envmod' (Environment Modules >= 4.1), 'spack' or 'nomod'.
        'modules_system': 'lmod',
        'partitions': [
            {
                # A CPU-only partition: no 'gpu' feature, so the CPU tests run here.
                'name': 'cpu',
                'descr': 'CPU nodes (placeholder)',
                'scheduler': 'slurm',       # or 'pbs', 'squeue' (Slurm without sacct), 'local', ...
                'launcher': 'srun',         # or 'mpirun', 'mpiexec', 'local', ...
                # Whole nodes: the tests run one task per node (or one per
                # socket for data-parallel scales) and TensorFlow uses every core.
                'access': ['--partition=cpu', '--exclusive',
                           *common.access_from_env(('--account={}', 'SSB_ACCOUNT'),
                                                   ('--qos={}', 'SSB_QOS'))],
                'environs': ['tensorflow'],
                'max_jobs': 8,              # jobs in the queue at once
                'features': ['cpu', 'x86_64'],
                'resources': common.slurm_resources(),
                'extras': {
                    'nodes': 100,                       # placeholder
                    'memory_per_node_gib': 256,         # placeholder
                    'peak_gflops_per_device': 5000,     # placeholder: node fp32 peak
                    # 'mame_root': '/path/to/MAMe',     # optional: the real dataset
                },
            },
            {
                # A GPU partition: the 'gpu' feature selects the GPU tests.
                'name': 'gpu',
                'descr': 'GPU nodes (placeholder)',
                'scheduler': 'slurm',
                'launcher': 'srun',
                # CPU cores per GPU (placeholder: your cores per node / GPUs per node).
                'access': ['--partition=gpu', '--cpus-per-gpu=16',
                           *common.access_from_env(('--account={}', 'SSB_ACCOUNT'),
                                                   ('--qos={}', 'SSB_QOS'))],
                'environs': ['tensorflow'],
                'max_jobs': 8,
                'features': ['gpu', 'nvidia'],  # 'gpu' + the vendor
                'devices': [{'type': 'gpu', 'arch': 'sm_80', 'num_devices': 4}],   # placeholder
                'resources': common.slurm_resources(),
                'extras': {
                    'nodes': 20,                        # placeholder
                    'memory_per_node_gib': 512,         # placeholder
                    'gpu_memory_gib': 40,               # placeholder
                    'peak_gflops_per_device': 19500,    # placeholder: one GPU's fp32 peak
                },
            },
        ],
    }],
    environments=[
        common.tensorflow_environ(
            'tensorflow',
            # Modules that give Python >= 3.9 with TensorFlow >= 2.16 (Keras 3)
            # and this package; or modules for Python only, plus a virtualenv
            # (pip install .[cpu] / .[gpu]) named with python=... or SSB_PYTHON.
            modules=['TensorFlow/2.16'],    # placeholder
            # python='/path/to/venv/bin/python',
            systems=['my_site'],
        ),
    ],
)
