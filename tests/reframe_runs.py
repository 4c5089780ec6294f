"""Run ReFrame as users do, in a subprocess, and read what it leaves behind."""
import os
import subprocess
import sys

from conftest import REPO

REFRAME = os.path.join(os.path.dirname(sys.executable), 'reframe')


def run_reframe(*args, cwd, config=None, env=None, timeout=1500, prefix=()):
    """``prefix``: a command ReFrame runs under, e.g. ``taskset -c 0``."""
    cmd = [*prefix, REFRAME, '-c', os.path.join(REPO, 'reframe_tests')]
    if config:
        cmd += ['-C', config]
    cmd += list(map(str, args))
    full_env = {k: v for k, v in os.environ.items() if not k.startswith('RFM_')}
    full_env.update(env or {})
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=full_env)


def read_perflog(path):
    """Records of a ReFrame filelog perflog ('|'-separated, one header line per format)."""
    records, header = [], None
    with open(path) as f:
        for line in f:
            fields = line.rstrip('\n').split('|')
            if fields[0] == 'result':
                header = fields
            else:
                records.append(dict(zip(header, fields)))
    return records
