"""An example site whose jobs run the payload inside an Apptainer image.

The partition declares ReFrame's ``Apptainer`` container platform and names the image in
``extras['container_image']`` (a SIF built from the image directory ``ssb-container build``
writes, ``apptainer build size-shape-bench.sif <dir>``; docs/clusters.md, "Containers");
the tests then launch ``apptainer exec <image> python3 -m payload ...`` with the stage
directory as the working directory and the data directory bound at its own path, and log the
image's sha256 as ``container_image_digest``. Test selection and the perflog are the same as
without a container. ``-S container_image=...`` overrides the image for one run.

Everything else is as in ``template.py`` (read that first); the figures are placeholders.
"""
import os

import reframe.utility as util

common = util.import_module_from_file(os.path.join(os.path.dirname(__file__), 'common.py'))

site_configuration = common.site_configuration(
    systems=[{
        'name': 'apptainer_example',
        'descr': 'A Slurm cluster running the payload in an Apptainer image (example)',
        'hostnames': [r'^apptainer-login\d+$'],
        'modules_system': 'nomod',
        'partitions': [common.slurm_partition(
            'cpu', 'CPU nodes, payload in a container (placeholder)',
            features=['cpu', 'x86_64'],
            access=['--partition=cpu'],
            whole_nodes=True,
            max_jobs=8,
            # The first platform is the tests' default; 'modules' would load the
            # runtime's module where it is one.
            container_platforms=[{'type': 'Apptainer'}],
            extras={
                'nodes': 16,                                            # placeholder
                'peak_gflops_per_device': 5000,                         # placeholder
                'container_image': '/shared/images/size-shape-bench.sif',   # placeholder
            },
        )],
    }],
    environments=[
        # No modules: TensorFlow comes from the image; the host needs only ReFrame.
        common.tensorflow_environ('tensorflow', modules=[], systems=['apptainer_example']),
    ],
)
