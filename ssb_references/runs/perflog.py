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
from array import array

from ssb_common import safefiles

from ssb_references.runs import compact, notices
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


def _lines(path):
    """(line number, header, fields) of every record of one perflog file, one at a time. A
    malformed line costs that line, with one warning naming it (notices.PerFile)."""
    bad = notices.PerFile(path)
    header, before_header = None, None
    with safefiles.open_regular(path, 'rb') as f:
        for lineno, raw in enumerate(f, 1):
            if not raw.endswith(b'\n'):
                bad.warn(f'{lineno}: skipped: a line without its end (a writer killed '
                         f'mid-line?)')
                continue
            try:
                line = raw[:-1].decode()
            except UnicodeDecodeError as err:
                bad.warn(f'{lineno}: skipped: not UTF-8 text ({err.reason} at byte '
                         f'{err.start})')
                continue
            if not line:
                continue
            fields = line.split('|')
            if fields[0] == 'result':
                header = tuple(fields)
            elif header is None:
                before_header = before_header or lineno
                bad.warn(f'{lineno}: skipped: a record before any header line')
            elif len(fields) != len(header):
                bad.warn(f'{lineno}: skipped: {len(fields)} fields, the header has '
                         f'{len(header)} (a torn line, or a "|" inside a value?)')
            else:
                yield lineno, header, fields
    bad.close()
    if header is None and before_header:
        raise PerflogError(f'{path}:{before_header}: a record before any header line '
                           f'(is this a ReFrame filelog perflog?)')


def records(path):
    """(line number, record as a dict of text) of each record of one perflog file, one at a
    time."""
    for lineno, header, fields in _lines(path):
        yield lineno, dict(zip(header, fields))


PERF_SUFFIXES = ('_value', '_unit', '_ref', '_lower_thres', '_upper_thres')
REF_SUFFIXES = ('_ref', '_lower_thres', '_upper_thres')


class _Layout:
    """Where the fields of one header are: test variables, performance variables (value,
    unit, reference and thresholds), completion time, test case name."""

    def __init__(self, header):
        at = {name: i for i, name in enumerate(header)}
        self.perf = [(name[:-len('_value')], i, at[name[:-len('_value')] + '_unit'],
                      tuple(at.get(name[:-len('_value')] + s) for s in REF_SUFFIXES))
                     for i, name in enumerate(header) if name.endswith('_value')
                     and name[:-len('_value')] + '_unit' in at]
        keep = [i for i, name in enumerate(header) if not name.endswith(PERF_SUFFIXES)]
        self.names = tuple(header[i] for i in keep)
        self.keep = compact._getter(keep)
        self.values = compact._getter([i for _, i, _, _ in self.perf])
        self.units = compact._getter([unit for _, _, unit, _ in self.perf])
        self.perf_names = tuple(var for var, _, _, _ in self.perf)
        self.ref_at = {var: refs for var, _, _, refs in self.perf}
        self.ref_texts = compact._getter([j for *_, refs in self.perf for j in refs
                                          if j is not None])
        self.unix, self.iso, self.case = (at.get(n) for n in ('job_completion_time_unix',
                                                             'job_completion_time', 'name'))


def _run(layout, fields, source, test, packer):
    texts = layout.keep(fields)
    units = layout.units(fields)
    try:                                  # all numbers (the usual case): parsed in one go
        values = array('d', map(float, layout.values(fields)))
        complete = math.isfinite(sum(values))           # no NaN or inf among them
    except ValueError:                    # a 'None', an empty field: one at a time
        values, complete = [_float(fields[i]) for _, i, _, _ in layout.perf], False
    if complete:                          # every value measured
        names = layout.perf_names
    else:                                 # only the measured ones count
        kept = [k for k, v in enumerate(values) if v is not None and math.isfinite(v)]
        names = tuple(layout.perf_names[k] for k in kept)
        units = tuple(units[k] for k in kept)
        values = array('d', (values[k] for k in kept))
    unix = _float(fields[layout.unix]) if layout.unix is not None else None
    time = unix if unix is not None else _time(
        {'job_completion_time': fields[layout.iso] if layout.iso is not None else None})
    if time is None:
        raise PerflogError('a record without a job completion time')
    refs = packer.logged_refs((id(layout), names, layout.ref_texts(fields)), lambda: {
        var: tuple(None if j is None else _float(fields[j]) for j in layout.ref_at[var])
        for var in names})
    run_fields = packer.fields(layout.names, texts,
                               fields[layout.case] if layout.case is not None else None)
    system, partition = run_fields.get('system'), run_fields.get('partition')
    return Run(system=system, partition=f'{system}:{partition}', test=test, fields=run_fields,
               perf=packer.perf(names, values, units), time=time, source=source,
               logged_refs=refs)


def read(paths, test=TEST_NAME):
    """Runs in these perflog files (the test's name is the file's), read one record at a
    time and kept compact (runs/compact.py): 500,000 records in about 0.4 GB."""
    packer, layouts, runs = compact.Packer(normalize), {}, []
    for path in paths:
        for lineno, header, fields in _lines(path):
            layout = layouts.get(header)
            if layout is None:
                layout = layouts[header] = _Layout(header)
            try:
                runs.append(_run(layout, fields, path, test, packer))
            except PerflogError as err:
                notices.warn(f'{path}:{lineno}: skipped: {err}')
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
