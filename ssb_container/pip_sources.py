"""Where the image's pip finds packages: where this machine's pip does.

A site's PyPI proxy or local mirror is pip configuration (files, ``PIP_*`` variables);
``ch-image build`` passes it to the Dockerfile's ``ARG PIP_*`` as build arguments, and binds
each local directory it names (a ``file://`` index, a ``find-links`` directory, the
certificate bundle of a TLS-intercepting proxy; an index with the directory around it, where
its pages' relative links lead) at one of the image's ``/mnt/N`` for the build's RUN steps.
Only ch-image's record of the build arguments (``/ch/metadata.json``) stays in the image.
Without any: PyPI.
"""
import os
import subprocess
import sys

# pip's settings that say where packages come from, by the build argument that carries them.
SETTINGS = {'index-url': 'PIP_INDEX_URL', 'extra-index-url': 'PIP_EXTRA_INDEX_URL',
            'find-links': 'PIP_FIND_LINKS', 'trusted-host': 'PIP_TRUSTED_HOST',
            'cert': 'PIP_CERT'}
# pip reads its configuration files in this order, the environment last: a later one wins.
SCOPES = ('global', 'user', 'site', ':env:')
MOUNTS = tuple(f'/mnt/{i}' for i in range(10))


def host_settings(python=sys.executable):
    """{setting: value} of ``pip config list`` for ``python``'s pip; {} if it has none."""
    try:
        out = subprocess.run([python, '-m', 'pip', 'config', 'list'], capture_output=True,
                             text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    found = {}
    for line in out.splitlines():
        name, sep, value = line.partition('=')
        scope, _, key = name.rpartition('.')
        if sep and key in SETTINGS and scope in SCOPES:
            found[(SCOPES.index(scope), key)] = value.strip().strip("'\"")
    return {key: value for (_, key), value in sorted(found.items())}


def _local_path(item):
    """The local path a setting's item names (``file://`` URL or absolute path), or None."""
    if item.startswith('file://'):
        return item[len('file://'):]
    return item if item.startswith('/') else None


def build_args(settings):
    """(``--build-arg`` values, ``--bind`` values) that give the build ``settings``, each
    local directory bound at a ``/mnt/N`` of its own and the settings rewritten to it."""
    binds, args = {}, {}
    for key, value in settings.items():
        items = []
        for item in value.split():
            path = _local_path(item)
            if path is None:
                items.append(item)
                continue
            if not os.path.exists(path):
                continue            # pip skips it as well
            path = path.rstrip('/') or '/'
            if key.endswith('index-url'):
                # An index's pages link to its files relatively, beside it (../../files/...).
                src = os.path.dirname(path)
            else:
                src = path if os.path.isdir(path) else os.path.dirname(path)
            top = next((s for s in binds if src == s or src.startswith(s + '/')), None)
            if top is None:
                if len(binds) == len(MOUNTS):
                    raise ValueError(f'pip names more than {len(MOUNTS)} local directories')
                top = src
                binds[top] = MOUNTS[len(binds)]
            moved = binds[top] + path[len(top):]
            items.append(('file://' + moved) if item.startswith('file://') else moved)
        if items:
            args[SETTINGS[key]] = ' '.join(items)
    return ([f'{name}={value}' for name, value in sorted(args.items())],
            [f'{src}:{dst}' for src, dst in binds.items()])
