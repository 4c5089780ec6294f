"""The acceptance judge reads ReFrame's ``--performance-compare`` CSV by its header's column
names: a comparison ReFrame really printed, of two sessions it really stored."""
import csv
import io
import json
import os
import re
import subprocess
import types

import pytest

from reframe_runs import REFRAME
from ssb_references.judge import acceptance_judge
from ssb_references.runs import resultsdb
from ssb_references.acceptance import command as acceptance

CHECK = '''
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import performance_function, sanity_function, variable


@rfm.simple_test
class TrainingTest(rfm.RunOnlyRegressionTest):
    """Stands in for the suite's TrainingTest: one steady epoch time, given with -S."""
    valid_systems = ['*']
    valid_prog_environs = ['*']
    executable = 'true'
    steady = variable(float, value=1.0)

    @sanity_function
    def ran(self):
        return sn.assert_eq(self.job.exitcode, 0)

    @performance_function('s')
    def steady_epoch_time(self):
        return self.steady
'''


@pytest.fixture(scope='module')
def compared(tmp_path_factory):
    """ReFrame's comparison of a session whose epochs took 2 s with one where they took 1 s,
    as ssb-acceptance asks for it."""
    tmp = tmp_path_factory.mktemp('compare')
    (tmp / 'check.py').write_text(CHECK)
    env = {k: v for k, v in os.environ.items() if not k.startswith('RFM_')}
    env.update(RFM_ENABLE_RESULTS_STORAGE='1', RFM_SQLITE_DB_FILE=str(tmp / 'results.db'),
               RFM_PERFLOG_DIR=str(tmp / 'perflogs'), TMPDIR=str(tmp),
               RFM_TABLE_FORMAT_DELIM=';')      # a user's setting the comparison overrides
    uuids = []
    for steady in (1.0, 2.0):
        proc = subprocess.run([REFRAME, '-c', tmp / 'check.py', '-r', '-S', f'steady={steady}',
                               '--prefix', tmp / 'rfm', '--report-file', tmp / 'report.json'],
                              capture_output=True, text=True, env=env, cwd=tmp)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        uuids += re.findall(r'Current session stored with UUID: (\S+)', proc.stdout)
    base, new = uuids
    args = types.SimpleNamespace(checks=str(tmp / 'check.py'), config=None, system=None)
    text = acceptance.performance_compare(args, env, base, new, str(tmp))
    assert text, 'ReFrame printed no comparison'
    return text, str(tmp / 'results.db'), uuids


@pytest.fixture(scope='module')
def new_session(compared):
    """ReFrame's JSON report of the second (new) session."""
    _, db, _ = compared
    with open(os.path.join(os.path.dirname(db), 'report.json')) as f:
        return json.load(f)


def reordered(text, drop=None):
    """The same CSV with its columns in reverse order (and one column left out)."""
    rows = list(csv.reader(io.StringIO(text)))
    keep = [i for i, name in enumerate(rows[0]) if name != drop][::-1]
    out = io.StringIO()
    csv.writer(out, lineterminator='\n').writerows([row[i] for i in keep] for row in rows)
    return out.getvalue()


def test_the_comparison_is_read_by_column_name(compared):
    text, _, _ = compared
    (row,) = acceptance_judge.compare_rows(text)
    assert row == {'name': 'TrainingTest', 'sysenv': 'generic:default+builtin',
                   'variable': 'steady_epoch_time', 'unit': 's', 'value': 2.0, 'base': 1.0}
    assert acceptance_judge.compare_rows(reordered(text)) == [row]


def test_twice_the_epoch_time_regresses_against_the_baseline(compared):
    text, _, _ = compared
    regressed, improved = acceptance_judge.against_baseline(acceptance_judge.compare_rows(text))
    (item,) = regressed
    assert not improved
    assert (item['variable'], item['value'], item['against']) == ('steady_epoch_time', 2.0, 1.0)
    assert item['partition'] == 'generic:default' and item['change_pct'] == 100.0


def test_a_missing_column_is_one_error_naming_it(compared):
    text, _, _ = compared
    with pytest.raises(acceptance_judge.CompareError) as err:
        acceptance_judge.compare_rows(reordered(text, drop='pval (median) (base)'))
    message = str(err.value)
    assert "no column 'pval (median) (base)'" in message and '\n' not in message


def test_output_that_is_no_comparison_is_refused_and_none_is_nothing():
    with pytest.raises(acceptance_judge.CompareError, match="no CSV header"):
        acceptance_judge.compare_rows('ERROR: something else\n')
    assert acceptance_judge.compare_rows('') == []


def test_the_previous_session_is_the_newest_judged_one_stored_before(compared):
    _, db, (base, new) = compared
    assert resultsdb.session_uuids(db) == [base, new]
    previous = acceptance_judge.previous_session
    assert previous(db, new, {base}) == (base, [])
    assert previous(db, base, {base, new}) == (None, [])
    assert previous(db, 'not-stored', {base, new}) == (new, [])
    # A stored session nobody judged (a run killed after ReFrame stored it, a plain reframe
    # run into the same database) is skipped over and named, never compared against.
    assert previous(db, 'not-stored', {base}) == (base, [new])
    assert previous(db, new, set()) == (None, [base])
    (note,) = acceptance_judge.never_judged_notes([base], '/out/reports')
    assert note == (f'session {base} in the database was never judged by ssb-acceptance here '
                    f'(no report under /out/reports): not used as the previous session')
    many = acceptance_judge.never_judged_notes([str(i) for i in range(11)], 'R')
    assert len(many) == 9 and many[0].startswith('session 3 ') and \
        many[-1] == '... and 3 earlier stored session(s) never judged here either'


def test_a_session_with_nothing_to_judge_it_against_exits_3(compared, new_session):
    """Nothing regressed and nothing had a basis: NOTHING JUDGED, exit 3, not PASSED."""
    text, _, (base, _) = compared
    first = acceptance_judge.judge(new_session, '', None, None, 'refs.yaml', verdicts=[],
                                   confidence=0.99)
    assert (first['exit_status'], first['verdict']) == (3, 'NOTHING JUDGED')
    assert 'no history and no references apply (refs.yaml)' in first['notes'][1]
    assert acceptance_judge.render(first).startswith(
        'size-shape-bench acceptance on generic: NOTHING JUDGED (exit 3)')
    # --baseline: ReFrame found nothing to compare, then it did (and the time doubled).
    nothing = acceptance_judge.judge(new_session, '', base, None, None)
    assert nothing['exit_status'] == 3 and nothing['notes'] == [
        f'ReFrame found nothing to compare with session {base}']
    assert acceptance_judge.judge(new_session, text, base, None, None)['exit_status'] == 1


def test_failed_tests_win_over_nothing_judged(new_session):
    broken = json.loads(json.dumps(new_session))
    (tc,) = broken['runs'][-1]['testcases']
    tc.update(result='fail', fail_phase='sanity', fail_reason='sanity error: no output')
    summary = acceptance_judge.judge(broken, '', None, None, 'refs.yaml', [], 0.99)
    assert (summary['exit_status'], summary['verdict']) == (2, 'TESTS FAILED TO RUN')
