"""Read ReFrame's filelog perflogs (``perflogs/<system>/<partition>/<test>.log``).

The format is ReFrame's builtin ``%(check_result)s|%(check_job_completion_time)s|%(check_#ALL)s``:
'|'-separated fields, a header line starting with ``result|`` (again whenever the
format changes; ReFrame then moves the old file to ``<test>.log.h0``, ``.h1``, ...),
performance variables as ``<name>_value``, ``_unit``, ``_ref``, ``_lower_thres``,
``_upper_thres``.
"""
import datetime
import glob
import math
import os

from ssb_references.runs.run import Run, TESTS, TEST_NAME, normalize


class PerflogError(Exception):
    pass


def _float(text):
    """The number in ``text``; None when there is none, NaN (not measured) included."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _time(fields):
    unix = _float(fields.get('job_completion_time_unix'))
    if unix is not None:
        return unix
    text = fields.get('job_completion_time')
    try:
        when = datetime.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.astimezone()     # ReFrame logs local time
    return when.timestamp()


def records(path):
    """The records of one perflog file as dicts of text."""
    out, header = [], None
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if not line:
                continue
            fields = line.split('|')
            if fields[0] == 'result':
                header = fields
            elif header is None:
                raise PerflogError(f'{path}:{lineno}: a record before any header line '
                                   f'(is this a ReFrame filelog perflog?)')
            elif len(fields) != len(header):
                raise PerflogError(f'{path}:{lineno}: {len(fields)} fields, the header has '
                                   f'{len(header)} (a "|" inside a value?)')
            else:
                out.append(dict(zip(header, fields)))
    return out


def run_from_record(rec, source, test=TEST_NAME):
    perf, refs = {}, {}
    for name in rec:
        if not name.endswith('_value'):
            continue
        var = name[:-len('_value')]
        if f'{var}_unit' not in rec:
            continue
        value = _float(rec[name])
        if value is None:
            continue
        perf[var] = (value, rec[f'{var}_unit'])
        refs[var] = tuple(_float(rec.get(f'{var}_{k}'))
                          for k in ('ref', 'lower_thres', 'upper_thres'))
    time = _time(rec)
    if time is None:
        raise PerflogError(f'{source}: a record without a job completion time')
    fields = {k: normalize(v) for k, v in rec.items()
              if not any(k.endswith(s) for s in ('_value', '_unit', '_ref', '_lower_thres',
                                                    '_upper_thres'))}
    system = fields.get('system')
    partition = fields.get('partition')
    return Run(system=system, partition=f'{system}:{partition}', test=test, fields=fields,
               perf=perf, time=time, source=source, logged_refs=refs)


def read(paths, test=TEST_NAME):
    """Runs in these perflog files (the test's name is the file's)."""
    runs = []
    for path in paths:
        runs += [run_from_record(rec, path, test) for rec in records(path)]
    return runs


def test_of(path):
    """The test a perflog file is of, from its name ('<test>.log', '<test>.log.hN')."""
    name = os.path.basename(path).split('.log')[0]
    return name if name in TESTS else TEST_NAME


def files(perflog_dir, system=None, test=TEST_NAME):
    """The test's perflog files under ``perflog_dir``, of one system or of all."""
    if not os.path.isdir(perflog_dir):
        raise PerflogError(f'no perflog directory {perflog_dir!r} (run ReFrame first, or pass '
                           f'--perflog-dir, --perflog or --db)')
    pattern = os.path.join(perflog_dir, system or '*', '*', f'{test}.log')
    found = []
    for path in sorted(glob.glob(pattern)):
        found += sorted(glob.glob(glob.escape(path) + '.h[0-9]*')) + [path]
    return found
