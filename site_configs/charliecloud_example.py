"""An example site whose jobs run the payload inside a Charliecloud image.

Charliecloud runs unprivileged: no daemon, no setuid helper, a directory or SquashFS image on
a shared file system. ReFrame does not ship a Charliecloud platform; the suite does
(reframe_tests/charliecloud.py), and a partition selects it as it selects ReFrame's own,
with ``'container_platforms': [{'type': 'Charliecloud'}]``. ``extras['container_image']``
names the image ``ssb-container build --out /shared/images/size-shape-bench`` wrote
(``-S container_image=...`` for one run). The job script then runs
``srun ch-run --set-env ... --bind=<data>:/mnt/0 ... --cd=/rfm_workdir <image> -- python3 -m
payload ...``; the perflog names the runtime (``container_runtime``), the image and its
digest, and what the payload found itself in (``container_detected``). A missing image, one
that is not an image and one without TensorFlow are refused at set-up, before anything is
submitted.

Everything else is as in ``template.py`` (read that first); the figures are placeholders.
"""
import os

import reframe.utility as util

common = util.import_module_from_file(os.path.join(os.path.dirname(__file__), 'common.py'))

site_configuration = common.site_configuration(
    systems=[{
        'name': 'charliecloud_example',
        'descr': 'A Slurm cluster running the payload in a Charliecloud image (example)',
        'hostnames': [r'^ch-login\d+$'],
        'modules_system': 'nomod',
        'partitions': [common.slurm_partition(
            'cpu', 'CPU nodes, payload in a Charliecloud image (placeholder)',
            features=['cpu', 'x86_64'],
            access=['--partition=cpu'],
            whole_nodes=True,
            max_jobs=8,
            # 'modules': ['charliecloud'] where the runtime is a module.
            container_platforms=[{'type': 'Charliecloud'}],
            extras={
                'nodes': 16,                                            # placeholder
                'peak_gflops_per_device': 5000,                         # placeholder
                'container_image': '/shared/images/size-shape-bench',   # placeholder
            },
        )],
    }],
    environments=[
        # No modules: TensorFlow comes from the image; the host needs only ReFrame.
        common.tensorflow_environ('tensorflow', modules=[], systems=['charliecloud_example']),
    ],
)
