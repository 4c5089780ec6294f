"""Name the bad key or backend of a site configuration (site_configs/common.py calls it on
every site file) before ReFrame's own validation reports it less precisely."""
import difflib

from reframe.core.backends import getlauncher, getscheduler
from reframe.core.exceptions import ConfigError

from ssb_common import reframe_private


def _did_you_mean(name, known):
    close = difflib.get_close_matches(str(name), sorted(known), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ''


def _check_keys(where, obj, allowed):
    for key in obj:
        if key not in allowed:
            hint = _did_you_mean(key, allowed)
            raise _config_error(f"{where}: unknown key '{key}'{hint}; "
                                f"valid keys: {', '.join(sorted(allowed))}")


def _check_backend(where, kind, name):
    get = getscheduler if kind == 'scheduler' else getlauncher
    try:
        get(name)
    except ConfigError:
        known = reframe_private.backend_names(kind)
        if name in known:       # registered, unusable on this host: ReFrame says so if used
            return
        hint = _did_you_mean(name, known)
        raise _config_error(f"{where}: unknown {kind} '{name}'{hint}; "
                            f"ReFrame knows: {', '.join(known)}") from None


def _config_error(msg):
    return ConfigError(f'size-shape-bench site config: {msg}')


def check_site(systems, environments, partition_extras, environ_extras):
    """Name the bad key or backend of a site config before ReFrame's schema check does.

    ReFrame validates the whole file against its JSON schema, and stays the judge of it;
    but it reports a misspelt required key ('launchr') as "'launcher' is a required
    property", takes a misspelt device key ('num_device') without a word, and finds an
    unknown launcher only when that system is selected. This check names the offending
    key (with the closest valid one) or the unknown scheduler/launcher, for every system
    in the file, with the keys of the running ReFrame's schema (read in
    ssb_common/reframe_private.py, the one place that reaches into ReFrame), and the
    ``extras`` keys the tests read (reframe_tests/site_keys.py).
    """
    keys = reframe_private.config_keys()
    for sys_ in systems:
        sname = sys_.get('name', '?')
        _check_keys(f"system '{sname}'", sys_, keys['system'])
        for part in sys_.get('partitions', []):
            where = f"partition '{sname}:{part.get('name', '?')}'"
            _check_keys(where, part, keys['partition'])
            _check_keys(f'{where}, processor', part.get('processor', {}), keys['processor'])
            for dev in part.get('devices', []):
                _check_keys(f'{where}, devices', dev, keys['device'])
            for res in part.get('resources', []):
                _check_keys(f'{where}, resources', res, keys['resource'])
            for kind in ('scheduler', 'launcher'):
                if kind in part:
                    _check_backend(where, kind, part[kind])
            # ReFrame accepts any extras: a misspelt one would be silently ignored.
            _check_keys(f'{where}, extras', part.get('extras', {}), partition_extras)

    for env in environments:
        where = f"environment '{env.get('name', '?')}'"
        _check_keys(where, env, keys['environment'])
        _check_keys(f'{where}, extras', env.get('extras', {}), environ_extras)
