"""Read test cases from ReFrame's results database (the SQLite file of ``storage``).

Read-only and without ReFrame's runtime: each row of ``sessions`` holds the JSON
report of one session (``json_blob``), whose test cases carry ``perfvalues``
(``'system:partition:var' -> [value, ref, lower, upper, unit, result]``) and the
test's variables.
"""
import json
import os
import sqlite3

from . import TEST_NAME
from .runs import Run, normalize


class ResultsDBError(Exception):
    pass


def _sessions(path):
    if not os.path.isfile(path):
        raise ResultsDBError(f'no results database {path!r} (enable ReFrame\'s results storage: '
                             f'RFM_ENABLE_RESULTS_STORAGE=1 or the site config\'s "storage")')
    try:
        conn = sqlite3.connect(f'file:{path}?mode=ro', uri=True)
        try:
            rows = conn.execute('SELECT uuid, json_blob FROM sessions '
                                'ORDER BY session_start_unix').fetchall()
        finally:
            conn.close()
    except sqlite3.Error as err:
        raise ResultsDBError(f'cannot read results database {path!r}: {err}') from None
    return rows


def _is_test(testcase, test):
    return testcase.get('name', '').split(' ')[0] == test


def read(path, test=TEST_NAME, sessions=None):
    """Runs of ``test`` in the database, optionally only in the sessions with these UUIDs."""
    runs = []
    for uuid, blob in _sessions(path):
        if sessions and uuid not in sessions:
            continue
        report = json.loads(blob)
        for run in report.get('runs', []):
            for tc in run.get('testcases', []):
                if not _is_test(tc, test) or not tc.get('perfvalues'):
                    continue
                perf, refs = {}, {}
                for key, values in tc['perfvalues'].items():
                    var = key.split(':')[-1]
                    value, ref, lower, upper, unit = values[:5]
                    if isinstance(value, (int, float)):
                        perf[var] = (float(value), unit)
                        refs[var] = (ref, lower, upper)
                fields = {k: normalize(v) for k, v in tc.items()
                          if not isinstance(v, (dict, list))}
                if isinstance(tc.get('job_nodelist'), list):
                    fields['job_nodelist'] = ','.join(map(str, tc['job_nodelist']))
                system = tc['system']
                partition = tc['partition']
                runs.append(Run(system=system, partition=f'{system}:{partition}', test=test,
                                fields=fields, perf=perf,
                                time=float(tc.get('job_completion_time_unix') or
                                           report['session_info']['time_end_unix']),
                                source=path, session=uuid, logged_refs=refs))
    return runs
