"""The CI cluster: one node running Slurm (with slurmdbd accounting) and Lmod.

    .ci/cluster/start                       # as root: munge, mariadb, slurmdbd, slurmctld, slurmd
    reframe -C site_configs/ci.py -r

The same ReFrame backends as a production site ('slurm' scheduler, which
needs sacct, 'srun' launcher, Lmod), on whatever machine runs the CI: the
node is this machine, so 'hostnames' matches any host name.

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

site_configuration = common.site_configuration(
    systems=[{
        'name': 'ci',
        'descr': 'CI: single-node Slurm cluster (slurmctld + slurmd + slurmdbd) with Lmod',
        'hostnames': ['.*'],
        'modules_system': 'lmod',
        'partitions': [common.slurm_partition(
            'cpu', 'the CI machine as a Slurm node, no GPU',
            features=['cpu'],
            # Two jobs share the node (the data fixture and the tests after it), each with
            # the cluster's default CPUs and memory (.ci/cluster/start); no account.
            user_access=(),
            max_jobs=2,
            # The batch shell needs the `module` function before the
            # environment's `module load`: it inherits it from an initialised
            # submitting shell; if not, it sources Lmod's bash init itself.
            prepare_cmds=[f'type module >/dev/null 2>&1 || . {LMOD_INIT}'],
            # No 'peak_gflops_per_device': the CI machine's CPU is unknown in advance.
            # No 'mame_root': the tests make synthetic data.
            extras={},
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
