"""The part every size-shape-bench site configuration shares.

A site file (``site_configs/<site>.py``) loads this module by path (with
``reframe.utility.import_module_from_file``: site files are not a package) and calls
:func:`site_configuration` with only what differs between sites: its
``systems`` and its TensorFlow ``environments``. Everything else lives here:

* ``logging``: the performance log (one record per test, with every performance
  variable and every loggable test variable: variant, model, batch_size,
  dataset, tensorflow_version, job id and node list, ...), plus an ``httpjson``
  handler for Elastic/Grafana that is off unless ``SSB_PERFLOG_HTTP_URL`` is set;
* ``general``: where the tests are, and results storage (ReFrame's SQLite
  database, so that ``reframe --list-stored-sessions`` and
  ``--performance-compare`` work across runs);
* ``modes``: ``--mode=acceptance`` (full sizes, every model, references enforced);
  without a mode the tests' defaults are the smoke run.

and the pieces a site file builds its own part with: :func:`slurm_partition` (a Slurm
partition with the CPUs and memory its jobs ask for), :func:`tensorflow_environ`,
:func:`access_from_env`.

This file is not a ReFrame configuration by itself: pass a site file to ``-C``.

Environment variables read here (all optional):

``SSB_PERFLOG_HTTP_URL``
    URL of an HTTP endpoint taking one JSON document per POST, e.g. an
    Elasticsearch index ``http://elastic.example.org:9200/ssb-perflog/_doc``.
    Unset (the default): no HTTP handler at all.
``SSB_PERFLOG_HTTP_AUTH``
    Value of the ``Authorization`` header sent with each record
    (e.g. ``ApiKey <key>``); read from the environment, never written here.
``SSB_PERFLOG_HTTP_DEBUG``
    ``1``: the httpjson handler writes each JSON record to a file in the
    current directory instead of sending it (ReFrame's ``debug`` mode).
``SSB_ACCOUNT``, ``SSB_QOS``
    Scheduler account (budget, project) and QoS, added to the job scripts of
    sites whose files use :func:`access_from_env`.
``SSB_PYTHON``
    The interpreter that runs the payload, for environments whose site file
    names none (:func:`tensorflow_environ`): typically a virtualenv where
    ``pip install .[gpu]`` (or ``.[cpu]``) installed this package, on a file
    system the compute nodes see. Unset: ``python3`` from PATH after the
    environment's modules are loaded.

ReFrame's own variables still apply on top: ``RFM_SQLITE_DB_FILE`` (results
database), ``RFM_PERFLOG_DIR`` (perflog directory), ``RFM_PREFIX``, ...
"""
import copy
import os

from reframe.utility import import_module_from_file

from ssb_contract.options import MODELS
from ssb_common import reframe_private, site_check

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The feature and extras names the tests read (one home: reframe_tests/site_keys.py).
site_keys = import_module_from_file(os.path.join(REPO, 'reframe_tests', 'site_keys.py'))

# Where the results database goes unless RFM_SQLITE_DB_FILE says otherwise.
# ReFrame expands ${HOME}; one file per user, shared by every site config.
RESULTS_DB = '${HOME}/.reframe/reports/size-shape-bench.db'

# ReFrame's own file perflog (its builtin configuration): one '|'-separated record per
# test with every loggable variable (`%(check_#ALL)s` minus ReFrame's ignore_keys) and,
# per performance variable, value|unit|reference|lower|upper, under
# perflogs/<system>/<partition>/<test>.log. Taken as ReFrame defines it, never restated.
BUILTIN_FILELOG = reframe_private.builtin_perflog_handler()


def perflog_handlers(environ=None):
    """The perflog handlers: ReFrame's file log, and an HTTP (Elastic) one when asked for."""
    environ = os.environ if environ is None else environ
    handlers = [copy.deepcopy(BUILTIN_FILELOG)]
    url = environ.get('SSB_PERFLOG_HTTP_URL', '').strip()
    if url:
        http = {
            'type': 'httpjson',
            'url': url,
            'level': 'info',
            # Constant fields added to every document, to filter on in Grafana.
            'extras': {'facility': 'size-shape-bench', 'data-version': '1'},
            # The same keys as the file log leaves out; performance values
            # arrive flattened as check_perf_<variable>_value/_unit/_ref/...
            'ignore_keys': list(BUILTIN_FILELOG['ignore_keys']),
            'debug': environ.get('SSB_PERFLOG_HTTP_DEBUG', '') not in ('', '0'),
        }
        auth = environ.get('SSB_PERFLOG_HTTP_AUTH', '')
        if auth:
            http['extra_headers'] = {'Authorization': auth}
        handlers.append(http)
    return handlers


def logging_config(environ=None):
    # Only the perflog handlers: ReFrame merges this entry with its builtin
    # one, which keeps its stdout stream and debug-file handlers.
    return [{
        'perflog_multiline': False,     # one record per test, all variables in it
        'handlers_perflog': perflog_handlers(environ),
    }]


def general_config():
    return [{
        # `reframe -C site_configs/<site>.py -r` finds the tests without -c.
        'check_search_path': [os.path.join(REPO, 'reframe_tests')],
        'check_search_recursive': False,
    }]


def storage_config():
    return [{'enable': True, 'sqlite_db_file': RESULTS_DB}]


# What -S can set is every `variable()` of the tests: see
# reframe_tests/training.py (TrainingTest) and reframe_tests/mame_data.py
# (SyntheticMAMe, the fixture that makes data when a partition has no
# extras['mame_root']).
ACCEPTANCE_OPTIONS = [
    # Every model, more epochs for a steadier steady state, and synthetic
    # data with 20 training images per class (580) at a tenth of MAMe's
    # linear size, so that the median image (~8 Mpx in MAMe) is ~80k px,
    # above HR&VS's 65k-pixel budget, as with the real data.
    # A partition with extras['mame_root'] trains on the real MAMe instead.
    # References are enforced: ReFrame fails a test whose performance is out
    # of its reference bounds (this mode never passes
    # --skip-performance-check).
    '-S', 'models=' + ','.join(MODELS),
    '-S', 'TrainingTest.epochs=10',     # TimeToAccuracy keeps its own epoch budget
    '-S', 'SyntheticMAMe.images_per_class=20',
    '-S', 'SyntheticMAMe.scale=0.1',
]


def modes_config():
    return [
        {'name': 'acceptance', 'options': list(ACCEPTANCE_OPTIONS)},
    ]


def tensorflow_environ(name='tensorflow', modules=(), python=None, *, systems=None,
                       env_vars=None, prepare_cmds=None, features=()):
    """A programming environment the tests select (feature ``tensorflow``).

    :arg modules: modules to load, in order, in each job script.
    :arg python: the interpreter that runs the payload, stored as
        ``extras['python']``; default: ``$SSB_PYTHON`` if set, else nothing
        (the tests then run ``python3`` from PATH once the modules are loaded).
    :arg systems: ``target_systems``: the system names this environ is for.
    """
    env = {
        'name': name,
        'features': [site_keys.TENSORFLOW, *features],
        'modules': list(modules),
        'extras': {},
    }
    python = python or os.environ.get('SSB_PYTHON', '').strip()
    if python:
        env['extras'][site_keys.PYTHON] = python
    if env_vars:
        env['env_vars'] = [list(kv) for kv in env_vars]
    if prepare_cmds:
        env['prepare_cmds'] = list(prepare_cmds)
    if systems:
        env['target_systems'] = list(systems)

    return env


def slurm_resources():
    """Resources of a Slurm partition.

    ``_rfm_gpu`` is what a test's standard ``num_gpus_per_node`` maps to; the
    GPU test sets it, so a GPU partition's job script asks for its GPUs with
    this option. ``memory`` is there for tests that set
    ``extra_resources = {'memory': {'size': '64G'}}``.
    """
    return [
        {'name': '_rfm_gpu', 'options': ['--gpus-per-node={num_gpus_per_node}']},
        {'name': 'memory', 'options': ['--mem={size}']},
    ]


def pbs_resources():
    """Resources of a PBS Pro partition: chunk resources join the ``-l select=`` line."""
    return [
        {'name': '_rfm_gpu', 'options': ['ngpus={num_gpus_per_node}']},
        {'name': 'memory', 'options': ['mem={size}']},
    ]


def access_from_env(*pairs, environ=None):
    """Scheduler options taken from the environment, for what each user sets.

    ``access_from_env(('--account={}', 'SSB_ACCOUNT'))`` gives
    ``['--account=<value>']`` when ``SSB_ACCOUNT`` is set and ``[]`` otherwise,
    so that a site file names no one's budget.
    """
    environ = os.environ if environ is None else environ
    return [fmt.format(environ[var]) for fmt, var in pairs if environ.get(var)]


# The account and QoS every user sets for themselves (access_from_env).
USER_ACCESS = (('--account={}', 'SSB_ACCOUNT'), ('--qos={}', 'SSB_QOS'))


def slurm_partition(name, descr, *, features=(), whole_nodes=False, cpus_per_gpu=None,
                    memory_per_node_gib=None, access=(), user_access=USER_ACCESS,
                    environs=('tensorflow',), **keys):
    """A Slurm partition that runs the tests with srun in the ``tensorflow`` environment.

    The CPUs and memory a job gets are Slurm options of the partition's ``access``:

    :arg whole_nodes: ``--exclusive``: every CPU of each node, for the CPU tests (one task
        per node, or one per socket at the data-parallel scales, with TensorFlow's threads
        on every core).
    :arg cpus_per_gpu: ``--cpus-per-gpu=N``: the CPUs a task gets for each GPU it drives
        (the one GPU of the single scale, every GPU of the node at the others), for its
        input pipeline. Per GPU, not per task: a fixed ``--cpus-per-task`` would give the
        task that drives a whole node's GPUs the CPUs of one.
    :arg memory_per_node_gib: ``--mem=<N>G``: the memory each job asks for on each node;
        at most what Slurm can give (the node's ``RealMemory`` in ``scontrol show node``,
        below the installed memory), or no job starts. Default: all of it (``--mem=0``)
        with ``whole_nodes``, else the site's default memory per CPU.
    :arg access: the partition's other options (``--partition``, ``--constraint``, ...);
        ``user_access`` adds each user's own account and QoS from the environment
        (:func:`access_from_env`). Every job also gets ``--no-requeue``: a run whose node
        failed ends with Slurm's reason instead of starting over unseen.
    :arg keys: the rest of the partition (``processor``, ``devices``, ``extras``,
        ``max_jobs``, ``prepare_cmds``, ``container_platforms``, ...).
    """
    options = list(access) + ['--no-requeue']
    if whole_nodes:
        options.append('--exclusive')
    if cpus_per_gpu:
        options.append(f'--cpus-per-gpu={cpus_per_gpu}')
    if memory_per_node_gib:
        options.append(f'--mem={memory_per_node_gib}G')
    elif whole_nodes:
        options.append('--mem=0')           # --exclusive alone gives the default per CPU
    return {
        'name': name,
        'descr': descr,
        'scheduler': 'slurm',
        'launcher': 'srun',
        'access': options + access_from_env(*user_access),
        'environs': list(environs),
        'features': list(features),
        'resources': slurm_resources(),
        **keys,
    }


def site_configuration(systems, environments, environ=None):
    """A complete ReFrame configuration: a site's systems and environments + the shared part."""
    site_check.check_site(systems, environments, site_keys.PARTITION_EXTRAS,
                          site_keys.ENVIRON_EXTRAS)
    return {
        'systems': systems,
        'environments': environments,
        'logging': logging_config(environ),
        'general': general_config(),
        'storage': storage_config(),
        'modes': modes_config(),
    }
