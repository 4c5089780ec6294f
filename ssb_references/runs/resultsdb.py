"""Read test cases from ReFrame's results database (the SQLite file of ``storage``).

Through ReFrame's documented command line, never the file itself, so that a ReFrame release
that changes the database's layout changes nothing here: ``reframe
--describe-stored-testcases`` prints the stored test cases as JSON in the run report's
format (``perfvalues``: ``'system:partition:var' -> [value, ref, lower, upper, unit,
result]``, the test's variables, ``session_uuid``), and ``reframe --list-stored-sessions
--table-format=csv`` lists the sessions. One ``reframe`` process per call, told the file
with ``RFM_SQLITE_DB_FILE`` and nothing else of the user's ReFrame settings.
"""
import csv
import datetime
import io
import json
import os
import re
import subprocess
import sys
import tempfile

from ssb_references.runs.run import Run, TEST_NAME, normalize

# pip installs ReFrame's command beside the Python it installed this package for.
REFRAME = os.path.join(os.path.dirname(sys.executable), 'reframe')
# A session filter every session passes: ReFrame's selection of all stored sessions.
ALL_SESSIONS = '?True'


class ResultsDBError(Exception):
    pass


def _reframe(path, *args):
    """What ``reframe ARGS`` prints about the database ``path``."""
    if not os.path.isfile(path):
        raise ResultsDBError(f'no results database {path!r} (enable ReFrame\'s results storage: '
                             f'RFM_ENABLE_RESULTS_STORAGE=1 or the site config\'s "storage")')
    env = {k: v for k, v in os.environ.items() if not k.startswith('RFM_')}
    # ReFrame writes a log file of every invocation to the temporary directory: this one's
    # goes with the directory.
    with tempfile.TemporaryDirectory(prefix='ssb-resultsdb-') as tmp:
        env.update(RFM_ENABLE_RESULTS_STORAGE='1', RFM_SQLITE_DB_FILE=os.path.abspath(path),
                   RFM_COLORIZE='n', TMPDIR=tmp)
        try:
            proc = subprocess.run([REFRAME, *args], capture_output=True, text=True, env=env,
                                  cwd=tmp)
        except OSError as err:
            raise ResultsDBError(f'cannot run ReFrame ({REFRAME}) to read {path!r}: '
                                 f'{err}') from None
    if proc.returncode != 0:
        lines = [line.strip() for line in (proc.stderr + proc.stdout).splitlines()
                 if line.strip()]
        errors = [line.split('ERROR:', 1)[1].strip() for line in lines if 'ERROR:' in line]
        why = (errors or lines or [f'exit status {proc.returncode}'])[-1]
        raise ResultsDBError(f'cannot read results database {path!r}: {why}')
    return proc.stdout


def _from(text, start, what, path):
    """The part of ReFrame's output from the first line starting with ``start``."""
    match = re.search(rf'^{re.escape(start)}', text, re.MULTILINE)
    if not match:
        raise ResultsDBError(f'ReFrame printed no {what} for results database {path!r}')
    return text[match.start():]


def _name_pattern(tests):
    """ReFrame's ``-n`` pattern for test cases of exactly these tests (any variant)."""
    return '^(' + '|'.join(re.escape(t) for t in sorted(tests)) + ')( |$)'


def _testcases(path, tests):
    text = _from(_reframe(path, f'--describe-stored-testcases={ALL_SESSIONS}',
                          '-n', _name_pattern(tests)), '[', 'test cases', path)
    try:
        cases, _ = json.JSONDecoder().raw_decode(text)
    except ValueError as err:
        raise ResultsDBError(f'ReFrame printed test cases of {path!r} that are not '
                             f'JSON: {err}') from None
    return cases


def session_uuids(path):
    """The UUIDs of the stored sessions, oldest first."""
    text = _from(_reframe(path, '--list-stored-sessions=all', '--table-format=csv',
                          '--table-format-delim=,'), 'UUID', 'session table', path)
    table = list(csv.DictReader(io.StringIO(text)))
    for column in ('UUID', 'Start time'):
        if table and column not in table[0]:
            raise ResultsDBError(f'ReFrame\'s session table of {path!r} has no column '
                                 f'{column!r}: {", ".join(table[0])}')
    started = {row['UUID']: datetime.datetime.strptime(row['Start time'], '%Y%m%dT%H%M%S%z')
               for row in table}
    return sorted(started, key=started.get)


def read(path, tests=TEST_NAME, sessions=None):
    """Runs of ``tests`` (a test name, or several) in the database, optionally only in the
    sessions with these UUIDs."""
    names = {tests} if isinstance(tests, str) else set(tests)
    runs = []
    for tc in _testcases(path, names):
        test = tc.get('name', '').split(' ')[0]
        uuid = tc.get('session_uuid') or ''
        completed = tc.get('job_completion_time_unix')
        # A case that measured something has run: it has its job's completion time.
        if (test not in names or not tc.get('perfvalues') or completed is None
                or (sessions and uuid not in sessions)):
            continue
        perf, refs = {}, {}
        for key, values in tc['perfvalues'].items():
            var = key.split(':')[-1]
            value, ref, lower, upper, unit = values[:5]
            if isinstance(value, (int, float)):
                perf[var] = (float(value), unit)
                refs[var] = (ref, lower, upper)
        fields = {k: normalize(v) for k, v in tc.items() if not isinstance(v, (dict, list))}
        if isinstance(tc.get('job_nodelist'), list):
            fields['job_nodelist'] = ','.join(map(str, tc['job_nodelist']))
        system = tc['system']
        runs.append(Run(system=system, partition=f'{system}:{tc["partition"]}', test=test,
                        fields=fields, perf=perf, time=float(completed), source=path,
                        session=uuid, logged_refs=refs))
    return sorted(runs, key=lambda r: r.time)
