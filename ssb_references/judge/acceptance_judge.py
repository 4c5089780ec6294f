"""The verdict of one acceptance session, and its one-screen summary.

By default each value of the session is judged as ``drift`` judges (judge/drift.py): against the
stored sessions of the same key, workload and payload series when there are at least 3 (a
prediction interval at a stated confidence, and a practical floor), else against the
references, saying so. With ``--baseline``: each variable's change from one stored
session's value, through ReFrame's ``--performance-compare``, beyond the variable's floor
tolerance (ssb_contract/perf.py) on its worse side: one session, so no confidence is stated.

Exit status: 2 tests failed to run, else 1 drift, else 3 nothing judged (no value had a
history or a reference; with ``--baseline``: nothing compared), else 0 passed.
"""
import csv
import io
import math

from ssb_references.judge import drift, drift_family, stats
from ssb_references.reffile import reffile, rule
from ssb_references.runs import resultsdb

OK, DRIFT, NOT_RUN, NOTHING_JUDGED = 0, 1, 2, 3
VERDICTS = {OK: 'PASSED', DRIFT: 'PERFORMANCE DRIFT', NOT_RUN: 'TESTS FAILED TO RUN',
            NOTHING_JUDGED: 'NOTHING JUDGED'}
SHOWN = 8             # items per list on the one screen; the rest are in summary.json


def system_of(session):
    for run in session.get('runs', []):
        for tc in run.get('testcases', []):
            if tc.get('system'):
                return tc['system']
    return None


def previous_session(db, uuid, judged):
    """(the newest session stored before ``uuid`` that is in ``judged``, or None; the sessions
    stored after that one and before ``uuid``, which are not). A session nobody judged (its
    ssb-acceptance killed after ReFrame stored it, a plain reframe run into the same
    database) is never the one a night is compared with."""
    try:
        uuids = resultsdb.session_uuids(db)
    except resultsdb.ResultsDBError:
        return None, []
    earlier = uuids[:uuids.index(uuid)] if uuid in uuids else uuids
    at = next((i for i in reversed(range(len(earlier))) if earlier[i] in judged), None)
    return (None, earlier) if at is None else (earlier[at], earlier[at + 1:])


def never_judged_notes(sessions, reports_dir):
    """A note on each of the newest SHOWN stored ``sessions`` never judged, and the count."""
    more = [f'... and {len(sessions) - SHOWN} earlier stored session(s) never judged here '
            f'either'] if len(sessions) > SHOWN else []
    return [f'session {s} in the database was never judged by ssb-acceptance here (no report '
            f'under {reports_dir}): not used as the previous session'
            for s in sessions[-SHOWN:]] + more


def _cases(session):
    """The last run's test cases (ReFrame's retries come as later runs)."""
    runs = session.get('runs') or [{}]
    return [tc for tc in runs[-1].get('testcases', []) if tc.get('result') != 'skip']


def _item(tc, name, value, base, unit, limit=None, judged=None):
    change = (value - base) / abs(base) * 100 if base else None
    return {'test': tc.get('display_name') or tc.get('name'), 'partition':
            f'{tc.get("system")}:{tc.get("partition")}', 'variable': name, 'value': value,
            'against': base, 'unit': unit, 'change_pct': change, 'limit_pct': limit,
            'judged_against': judged}


def from_verdicts(verdicts):
    """(regressed, improved) items from drift's verdicts on the session's runs; the limit is
    the edge of the band or interval on the side the value left by."""
    regressed, improved = [], []
    for v in verdicts:
        if v.status not in drift.DRIFTED:
            continue
        if v.basis == 'history':
            centre = v.interval.centre
            edge = v.interval.high if v.value > centre else v.interval.low
        else:
            centre, lower, upper, _ = reffile.entry_tuple(v.reference)
            low, high = reffile.band(centre, lower, upper)
            edge = high if v.value > centre else low
        limit = (edge - centre) / abs(centre) * 100 if centre and math.isfinite(edge) else None
        tc = {'display_name': v.run.get('display_name') or v.run.get('name') or v.test,
              'system': v.run.system, 'partition': v.run.partition.split(':', 1)[-1]}
        item = _item(tc, v.variable, v.value, centre, v.unit, limit,
                     judged=v.against() + (f'; {v.note}' if v.note else ''))
        item['detects'] = drift.detectable_text(v)
        (improved if v.status == 'improved' else regressed).append(item)
    return regressed, improved


def basis_note(verdicts, confidence):
    """How the values were judged: against history (how sure), references, or not at all."""
    counts = {b: sum(v.basis == b for v in verdicts) for b in ('history', 'references', 'none')}
    return (f'{counts["history"]} value(s) judged against the history of their workload '
            f'(at least {drift.MIN_HISTORY} earlier sessions; together, so that an unchanged '
            f'session raises no alarm with {stats.percent(confidence)} confidence), '
            f'{counts["references"]} against the references (too little history), '
            f'{counts["none"]} not judged (neither)')


# ReFrame's --performance-compare as the acceptance asks for it: the median of each side, the
# new session on the left, each side named in the CSV header. Read by the header's names.
NEW, BASE = 'new', 'base'
COMPARE_COLUMNS = {'name': 'name', 'sysenv': 'sysenv', 'variable': 'pvar', 'unit': 'punit',
                   'value': f'pval (median) ({NEW})', 'base': f'pval (median) ({BASE})'}


class CompareError(ValueError):
    """ReFrame's comparison is not in the form compare_rows reads."""


def compare_args(new, base):
    """ReFrame's options for the comparison of session ``new`` with ``base`` that
    compare_rows reads (the delimiter too: RFM_TABLE_FORMAT_DELIM would change it)."""
    return [f'--performance-compare={new}/{base}/median:/', '--table-format=csv',
            '--table-format-delim=,', f'--term-lhs={NEW}', f'--term-rhs={BASE}']


def compare_rows(text):
    """ReFrame's --performance-compare CSV (``compare_args``) as dicts; a variable without a
    value on both sides is left out."""
    table = list(csv.reader(io.StringIO(text)))
    at = next((i for i, row in enumerate(table) if COMPARE_COLUMNS['name'] in row), None)
    if at is None:
        if text.strip():
            raise CompareError(f"ReFrame's --performance-compare printed no CSV header "
                               f"(a row with a column {COMPARE_COLUMNS['name']!r})")
        return []                   # ReFrame could not compare: nothing printed
    header = table[at]
    missing = [col for col in COMPARE_COLUMNS.values() if col not in header]
    if missing:
        raise CompareError(f"ReFrame's --performance-compare CSV has no column "
                           f"{', '.join(map(repr, missing))}; its columns: {', '.join(header)}")
    rows = []
    for row in table[at + 1:]:
        if len(row) != len(header):
            continue
        rec = {key: row[header.index(col)] for key, col in COMPARE_COLUMNS.items()}
        try:
            rec['value'], rec['base'] = float(rec['value']), float(rec['base'])
        except ValueError:          # '<no data>' on one side
            continue
        rows.append(rec)
    return rows


def against_baseline(rows):
    """(regressed, improved) items: changes beyond each variable's floor tolerance."""
    regressed, improved = [], []
    for r in rows:
        pol = rule.policy(r['variable'])
        if pol is None:
            continue
        base, value = r['base'], r['value']
        limit = max(pol.rel_floor * abs(base), pol.abs_floor)
        worse = {'lower': value - base, 'higher': base - value}.get(pol.better,
                                                                    abs(value - base))
        tc = {'display_name': r['name'], 'system': r['sysenv'].split('+')[0].split(':')[0],
              'partition': r['sysenv'].split('+')[0].split(':')[-1]}
        sign = -1 if pol.better == 'higher' else 1       # the worse side's limit
        item = _item(tc, r['variable'], value, base, r['unit'],
                     sign * limit / abs(base) * 100 if base else None)
        if worse > limit:
            regressed.append(item)
        elif pol.better != 'exact' and -worse > limit:
            improved.append(item)
    return regressed, improved


def judge(session, compare_csv, baseline, previous, refs_path, verdicts=(), confidence=None,
          extra_notes=()):
    """The summary of ``session``; ``extra_notes`` go after the judgement's own."""
    cases = _cases(session)
    failed = [{'test': tc.get('display_name') or tc.get('name'),
               'partition': f'{tc.get("system")}:{tc.get("partition")}',
               'phase': tc.get('fail_phase'), 'reason': tc.get('fail_reason')}
              for tc in cases if tc.get('result') in ('fail', 'abort')
              and tc.get('fail_phase') != 'performance']
    tests = [tc for tc in cases if not tc.get('fixture')]   # fixtures fail to run, or count not
    rows = compare_rows(compare_csv)
    if baseline:
        regressed, improved = against_baseline(rows)
    else:
        regressed, improved = from_verdicts(verdicts)
    notes = []
    if not baseline:
        notes.append(basis_note(verdicts, confidence))
        if not any(v.basis != 'none' for v in verdicts):
            notes.append(f'no history and no references apply ({refs_path}): nothing could '
                         f'regress; run {drift.MIN_HISTORY} sessions, or make references with '
                         f'ssb-references update')
        notes += [n for n in (drift_family.basis_text(verdicts, confidence),
                              drift_family.too_short(verdicts)) if n]
    if baseline and not rows:
        notes.append(f'ReFrame found nothing to compare with session {baseline}')
    notes += list(extra_notes)
    # Something had a basis: a history or a reference (ReFrame's performance check is one),
    # or, with --baseline, a compared variable that has a tolerance.
    judged = (any(tc.get('fail_phase') == 'performance' for tc in cases) or
              (any(rule.policy(r['variable']) for r in rows) if baseline else
               any(v.basis != 'none' for v in verdicts)))
    status = (NOT_RUN if failed or not cases else DRIFT if regressed else
              OK if judged else NOTHING_JUDGED)
    info = session.get('session_info', {})
    largest = sorted((r for r in rows if r['base']),
                     key=lambda r: -abs(r['value'] - r['base']) / abs(r['base']))
    return {
        'exit_status': status, 'verdict': VERDICTS[status],
        'system': system_of(session), 'session': info.get('uuid'),
        'time': info.get('time_end'),
        'judged_against': (f'baseline session {baseline}' if baseline else
                           f'the history of the stored sessions at '
                           f'{stats.percent(confidence)}, else references {refs_path}'),
        'counts': {'test cases': len(tests),
                   'passed': sum(tc.get('result') == 'pass' for tc in tests),
                   'failed on performance': sum(tc.get('fail_phase') == 'performance'
                                                for tc in cases),
                   'failed to run': len(failed)},
        'regressed': regressed, 'improved': improved, 'failed': failed,
        'previous_session': None if baseline else previous,
        'largest_changes': [] if baseline else [
            {'test': r['name'], 'variable': r['variable'], 'value': r['value'],
             'against': r['base'], 'unit': r['unit'],
             'change_pct': (r['value'] - r['base']) / abs(r['base']) * 100}
            for r in largest[:SHOWN]],
        'notes': notes,
    }


def dry_run_summary(session, reframe_status):
    cases = _cases(session)
    return {'exit_status': OK if reframe_status == 0 else NOT_RUN, 'dry_run': True,
            'verdict': 'DRY RUN' if reframe_status == 0 else VERDICTS[NOT_RUN],
            'system': system_of(session), 'session': None, 'time': None,
            'judged_against': None,
            'counts': {'test cases': sum(not tc.get('fixture') for tc in cases)},
            'regressed': [], 'improved': [], 'failed': [], 'previous_session': None,
            'largest_changes': [], 'notes': ['dry run: job scripts made, nothing submitted']}


def _num(x):
    return '-' if x is None else f'{x:.4g}'


def _line(item):
    change = item.get('change_pct')
    where = f' @{item["partition"]}' if item.get('partition') else ''
    text = (f'  {item["test"]}{where}: {item["variable"]} '
            f'{_num(item["value"])} {item["unit"]} vs {_num(item["against"])}')
    if change is not None:
        text += f' ({change:+.1f}%'
        text += f', limit {item["limit_pct"]:+.1f}%)' if item.get('limit_pct') is not None else ')'
    if item.get('detects'):
        text += f'; smallest change it could catch {item["detects"]}'
    if item.get('judged_against'):
        text += f'; judged against {item["judged_against"]}'
    return text


def render(summary):
    """The one-screen summary."""
    out = [f'size-shape-bench acceptance on {summary["system"]}: {summary["verdict"]} '
           f'(exit {summary["exit_status"]})']
    if summary.get('session'):
        out.append(f'session {summary["session"]}, ended {summary["time"]}; judged against '
                   f'{summary["judged_against"]}')
    out.append(', '.join(f'{v} {k}' for k, v in summary['counts'].items()))
    for title, key in (('failed to run', 'failed'), ('regressed', 'regressed'),
                       ('improved', 'improved')):
        items = summary[key]
        if not items:
            continue
        out.append(f'{title} ({len(items)}):')
        for item in items[:SHOWN]:
            out.append(f'  {item["test"]} @{item["partition"]}: {item["phase"]}: '
                       f'{item["reason"]}' if key == 'failed' else _line(item))
        if len(items) > SHOWN:
            out.append(f'  ... and {len(items) - SHOWN} more (summary.json)')
    if summary.get('previous_session'):
        out.append(f'largest changes since the previous session {summary["previous_session"]}:')
        out += [_line(item) for item in summary['largest_changes']]
    if summary.get('recent_changes') is not None:
        found = summary['recent_changes']
        out.append(f'change points in the last {summary["change_nights"]} night(s) of the '
                   f'stored history ({len(found)}; all: changes/changes.md)' +
                   (':' if found else ''))
        out += [f'  {text}' for text in found[:SHOWN]]
        if len(found) > SHOWN:
            out.append(f'  ... and {len(found) - SHOWN} more (summary.json)')
    out += [f'note: {n}' for n in summary['notes']]
    if summary.get('report_dir'):
        out.append(f'report: {summary["report_dir"]}')
    return '\n'.join(out) + '\n'
