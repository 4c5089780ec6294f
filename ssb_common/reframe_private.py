"""The only place the suite reaches into ReFrame beyond its documented interfaces.

Everything else uses what ReFrame documents: the test API (``reframe``,
``reframe.core.builtins``, ``reframe.core.pipeline``, ``reframe.core.runtime``,
``reframe.core.exceptions``, ``reframe.core.backends.getscheduler``/``getlauncher``,
``reframe.utility`` and its ``sanity``, ``typecheck`` and ``udeps``), the configuration
reference, and the command line (``--describe-stored-testcases``,
``--list-stored-sessions``, ``--performance-compare`` with ``--table-format=csv``).
tests/test_reframe_private.py fails when another module imports a ReFrame module that is
not documented, when the installed ReFrame is outside the range setup.cfg pins, or when an
access below stops working on it: a ReFrame upgrade fails there, loudly, first.

What is here, and why nothing public does it:

* :func:`builtin_perflog_handler`: ReFrame's builtin ``filelog`` perflog handler (its
  format and ``ignore_keys``), from ``reframe.core.settings``. The configuration reference
  shows the builtin configuration only as a listing, and a site's ``handlers_perflog``
  replaces the builtin list: keeping ReFrame's file perflog beside the HTTP one means
  naming it.
* :func:`config_keys`: the keys of each configuration object, from the JSON schema ReFrame
  validates configurations with (``reframe/schemas/config.json`` in its install tree). The
  configuration reference names the file; no interface returns it. Used only to name a
  misspelt key and the closest valid one: ReFrame's own validation still judges the
  configuration.
* :func:`backend_names`: the registered schedulers or launchers
  (``reframe.core.backends``' registries), for "did you mean" and "ReFrame knows: ...";
  the documented ``getscheduler``/``getlauncher`` only tell whether one name exists.
* :func:`variable_names`, :func:`variable_default`, :func:`parameter_names`,
  :func:`parameter_values`: a test class's variables and parameters, a variable's default
  and a parameter's values (its metaclass' ``var_space``/``param_space``, not in ReFrame's
  documentation).
* :func:`partitions`: the partitions ReFrame builds from a configuration file
  (``reframe.core.config.load_config``, ``reframe.core.systems.System.create``), for the
  unit tests of partition-dependent logic (reframe_tests/scaling.py); a test only receives
  them from ReFrame's runtime.
"""
import copy
import json
import os

from reframe.core.exceptions import ConfigError


class UnsupportedReframe(ConfigError):
    """An access of this module failed: the installed ReFrame is not one the suite supports."""


def _unsupported(what, err):
    import reframe
    return UnsupportedReframe(f'{what} is not where ReFrame {reframe.VERSION} keeps it ({err}); '
                              f'size-shape-bench supports the ReFrame versions setup.cfg pins')


def builtin_perflog_handler():
    """A copy of ReFrame's builtin ``filelog`` perflog handler."""
    try:
        from reframe.core.settings import site_configuration
        (handler,) = [h for h in site_configuration['logging'][0]['handlers_perflog']
                      if h['type'] == 'filelog']
    except (ImportError, KeyError, IndexError, TypeError, ValueError) as err:
        raise _unsupported('the builtin filelog perflog handler', err) from None
    return copy.deepcopy(handler)


def config_keys():
    """The keys ReFrame's configuration schema allows in each object a site file writes:
    ``{'system', 'partition', 'processor', 'device', 'resource', 'environment'}`` -> names."""
    import reframe
    path = os.path.join(reframe.INSTALL_PREFIX, 'reframe', 'schemas', 'config.json')
    try:
        with open(path) as f:
            schema = json.load(f)
        system = schema['properties']['systems']['items']
        partition = system['properties']['partitions']['items']
        return {
            'system': set(system['properties']),
            'partition': set(partition['properties']),
            'processor': set(schema['defs']['processor_info']['properties']),
            'device': set(schema['defs']['device_info']['properties']),
            'resource': set(partition['properties']['resources']['items']['properties']),
            'environment': set(schema['properties']['environments']['items']['properties']),
        }
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise _unsupported('the configuration schema', err) from None


def backend_names(kind):
    """The names of every scheduler (``kind='scheduler'``) or launcher ReFrame registers."""
    from reframe.core import backends
    get = {'scheduler': backends.getscheduler, 'launcher': backends.getlauncher}[kind]
    get('local')            # imports every backend module, which registers its backends
    try:
        return sorted(getattr(backends, f'_{kind}s'))
    except (AttributeError, TypeError) as err:
        raise _unsupported(f'the {kind} registry', err) from None


def variable_names(cls):
    """The names of the variables of a test class (its bases' included)."""
    try:
        return set(cls.var_space)
    except (AttributeError, TypeError) as err:
        raise _unsupported('the variable space of a test class', err) from None


def variable_default(cls, name):
    """The value a test class gives its variable ``name`` (``-S`` included)."""
    try:
        return cls.var_space[name].default_value
    except (AttributeError, TypeError, KeyError) as err:
        raise _unsupported(f'the default of the variable {name!r} of a test class', err) \
            from None


def parameter_values(cls, name):
    """The values of the parameter ``name`` of a test class."""
    try:
        return tuple(cls.param_space[name])
    except (AttributeError, TypeError, KeyError) as err:
        raise _unsupported(f'the values of the parameter {name!r} of a test class', err) \
            from None


def parameter_names(cls):
    """The names of the parameters of a test class (its bases' and ``-P``'s included)."""
    try:
        return list(cls.param_space.params)
    except (AttributeError, TypeError) as err:
        raise _unsupported('the parameter space of a test class', err) from None


def partitions(config_file, system):
    """{name: partition} of ``system`` as ReFrame builds them from ``config_file``."""
    try:
        from reframe.core.config import load_config
        from reframe.core.systems import System
        config = load_config(config_file)
        config.select_subconfig(system)
        return {p.name: p for p in System.create(config).partitions}
    except (ImportError, AttributeError, TypeError) as err:
        raise _unsupported('building partitions from a configuration', err) from None
