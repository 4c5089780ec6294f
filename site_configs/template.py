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
    ``local_scratch``           node-local directory the images are staged to
                                before training (absent: read where they are).
    ``container_image``         image the payload runs in, with the partition's
                                ``container_platforms`` (absent: no container).
    ``gpu_memory_gib``          memory of one GPU; passed to the payload as its
                                memory limit.
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
* ``common.slurm_partition(name, descr, features=..., ...)`` writes a Slurm
  partition (srun, the ``tensorflow`` environment, ``slurm_resources()``, each
  user's ``SSB_ACCOUNT``/``SSB_QOS``) with the CPUs and memory its jobs need:
  ``whole_nodes=True`` (``--exclusive --mem=0``: every core and all memory, for
  CPU partitions), ``cpus_per_gpu=N`` (``--cpus-per-gpu=N``: CPUs for each GPU a
  task drives), ``memory_per_node_gib=N`` (``--mem=NG`` per node: at most the
  node's ``RealMemory`` in ``scontrol show node``, not the installed memory);
  any other partition key as a keyword (``devices=``, ``extras=``, ...).

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
            # A Slurm partition (scheduler 'slurm', launcher 'srun', the 'tensorflow'
            # environment, each user's SSB_ACCOUNT/SSB_QOS); for another scheduler or
            # launcher, write the partition's dict yourself (see pbs_example.py).
            common.slurm_partition(
                # A CPU-only partition: no 'gpu' feature, so the CPU tests run here.
                'cpu', 'CPU nodes (placeholder)',
                features=['cpu', 'x86_64'],
                access=['--partition=cpu'],
                # Whole nodes (--exclusive, --mem=0): the tests run one task per node (or
                # one per socket for data-parallel scales) and TensorFlow uses every core.
                whole_nodes=True,
                max_jobs=8,                 # jobs in the queue at once
                extras={
                    'nodes': 100,                       # placeholder
                    'peak_gflops_per_device': 5000,     # placeholder: node fp32 peak
                    # 'mame_root': '/path/to/MAMe',     # optional: the real dataset
                    # Optional: node-local storage the images are staged to before
                    # training (the stage_time and stage_bandwidth metrics).
                    # 'local_scratch': '/tmp',
                },
            ),
            common.slurm_partition(
                # A GPU partition: the 'gpu' feature selects the GPU tests.
                'gpu', 'GPU nodes (placeholder)',
                features=['gpu', 'nvidia'],  # 'gpu' + the vendor
                access=['--partition=gpu'],
                # CPU cores per GPU (placeholder: your cores per node / GPUs per node).
                cpus_per_gpu=16,
                # Optional: --mem=<N>G, what each job asks for per node; at most the
                # node's RealMemory (scontrol show node). Unset: Slurm's default.
                # memory_per_node_gib=120,
                max_jobs=8,
                devices=[{'type': 'gpu', 'arch': 'sm_80', 'num_devices': 4}],   # placeholder
                extras={
                    'nodes': 20,                        # placeholder
                    'gpu_memory_gib': 40,               # placeholder
                    'peak_gflops_per_device': 19500,    # placeholder: one GPU's fp32 peak
                    # Optional: run the payload in this image, with the partition's
                    # container_platforms=[{'type': 'Apptainer'}] (see apptainer_example.py).
                    # 'container_image': '/path/to/size-shape-bench.sif',
                },
            ),
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
