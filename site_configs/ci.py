"""The CI cluster: Slurm (with slurmdbd accounting) and Lmod, its compute nodes in
namespaces on this machine (docs/ci.md).

    .ci/cluster/start          # as root: munge, mariadb, slurmdbd, slurmctld, 3 slurmd nodes
    cd /var/lib/ssb-slurm/shared && reframe -C <repo>/site_configs/ci.py -r

The same ReFrame backends as a production site ('slurm' scheduler, which
needs sacct, 'srun' launcher, Lmod), on whatever machine runs the CI: the
login node is this machine, so 'hostnames' matches any host name. Each node has its own
/tmp and node-local scratch, so ReFrame must run where the nodes see its stage
directory: anywhere outside /tmp (or under the repository). The nodes share this
machine's cores: their figures are functional proof, not performance.

The environment loads the module ``size-shape-bench/ci`` from
``site_configs/ci_modules`` (it puts ``<repo>/.venv/bin``, or ``$SSB_VENV/bin``,
first on PATH); this file adds that directory to ``MODULEPATH`` when loaded,
so that neither ReFrame (which checks the module with ``module show``) nor the
Slurm job (which inherits the submitting environment) needs a ``module use``.
"""
import os

import reframe.utility as util


# ReFrame loads this file by path: load the shared part beside it the same way.
common = util.import_module_from_file(os.path.join(os.path.dirname(__file__), 'common.py'))

CI_MODULES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'ci_modules')
_modulepath = [p for p in os.environ.get('MODULEPATH', '').split(':') if p]
if CI_MODULES not in _modulepath:
    os.environ['MODULEPATH'] = ':'.join([CI_MODULES, *_modulepath])

# Debian's Lmod (package lmod). ReFrame finds Lmod through LMOD_CMD, which
# only an initialised shell has: default it, so that reframe also works when
# started from a plain shell.
LMOD_INIT = '/usr/share/lmod/lmod/init/bash'
if os.access('/usr/share/lmod/lmod/libexec/lmod', os.X_OK):
    os.environ.setdefault('LMOD_CMD', '/usr/share/lmod/lmod/libexec/lmod')

# As .ci/cluster/start makes them (its common.sh): the node count and where each node
# mounts its own scratch directory.
CLUSTER_DIR = os.environ.get('SSB_SLURM_DIR', '/var/lib/ssb-slurm')
NODES = os.environ.get('SSB_SLURM_NODES', '3')
if not NODES.isdigit() or int(NODES) < 1:
    raise ValueError(f'SSB_SLURM_NODES={NODES!r} is not a node count')
NODES = int(NODES)

site_configuration = common.site_configuration(
    systems=[{
        'name': 'ci',
        'descr': f'CI: Slurm cluster of {NODES} nodes in namespaces (slurmdbd accounting, Lmod)',
        'hostnames': ['.*'],
        'modules_system': 'lmod',
        'partitions': [common.slurm_partition(
            'cpu', f'{NODES} CPU nodes sharing the CI machine\'s cores, no GPU',
            features=['cpu'],
            # Untimed jobs (the data fixture) share a node with the cluster's default CPUs and
            # memory per job; timed ones take whole nodes (exclusive_access). No account.
            user_access=(),
            max_jobs=2 * NODES,
            # The batch shell needs the `module` function before the
            # environment's `module load`: it inherits it from an initialised
            # submitting shell; if not, it sources Lmod's bash init itself.
            prepare_cmds=[f'type module >/dev/null 2>&1 || . {LMOD_INIT}'],
            # -S container_image=... runs the payload in that image (ssb-container build).
            container_platforms=[{'type': 'Charliecloud'}],
            # No 'peak_gflops_per_device': the CI machine's CPU is unknown in advance.
            # No 'mame_root': the tests make synthetic data. One data-parallel worker per node.
            extras={'nodes': NODES, 'cpu_workers_per_node': 1,
                    'local_scratch': os.path.join(CLUSTER_DIR, 'lscratch')},
        )],
    }],
    environments=[
        common.tensorflow_environ(
            'tensorflow',
            modules=['size-shape-bench/ci'],
            systems=['ci'],
        ),
    ],
)
