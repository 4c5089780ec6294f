"""``ssb-acceptance`` end to end: real ReFrame runs, real reports, the lock, kills, the webhook,
a first night that judged nothing (exit 3) and one judged against references, and the exit
statuses through the CI Slurm cluster (test_acceptance_recipes.py: the
scheduling recipes of docs/acceptance.md)."""
import fcntl
import http.server
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import CI_CONFIG, REPO
from test_slurm_cluster import cluster_env, missing_module_config

SSB_ACCEPTANCE = os.path.join(os.path.dirname(sys.executable), 'ssb-acceptance')
TINY = ['--', '-n', 'TrainingTest.*variant=lrfs.*scale=single', '-S', 'epochs=2',
        '-S', 'SyntheticMAMe.images_per_class=2', '-S', 'models=smallcnn']
PASSED_ONE = {'test cases': 1, 'passed': 1, 'failed on performance': 0, 'failed to run': 0}


def acceptance(*args, cwd, env=None, timeout=900):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(('RFM_', 'SSB_'))}
    full_env.update(env or {})
    return subprocess.run([SSB_ACCEPTANCE, *map(str, args)], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def reports(out):
    return sorted(n for n in os.listdir(out / 'reports') if not n.startswith('.'))


def generic_env(tmp):
    return {'RFM_SQLITE_DB_FILE': str(tmp / 'results.db'), 'RFM_REFERENCE_PREFIX': str(tmp)}


@pytest.fixture(scope='module')
def first_run(tmp_path_factory):
    """A clean first run on the builtin generic system, no references yet: nothing judged."""
    tmp = tmp_path_factory.mktemp('acceptance')
    (tmp / 'references').mkdir()
    proc = acceptance('--out', tmp / 'out', *TINY, cwd=REPO, env=generic_env(tmp))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    return tmp, proc


def test_a_clean_run_writes_a_dated_report(first_run):
    tmp, proc = first_run
    out = tmp / 'out'
    (stamp,) = reports(out)
    assert re.fullmatch(r'\d{8}T\d{6}Z', stamp)
    assert os.readlink(out / 'latest') == os.path.join('reports', stamp)
    report = out / 'latest'
    summary = json.loads((report / 'summary.json').read_text())
    assert summary['exit_status'] == 3 and summary['verdict'] == 'NOTHING JUDGED'
    # the data fixture is not a test case of its own
    assert summary['counts'] == PASSED_ONE
    assert summary['system'] == 'generic'
    # No earlier session and no references: nothing judged, and it says so.
    assert summary['notes'][0].startswith('0 value(s) judged against the history')
    assert 'no history and no references apply' in summary['notes'][1]
    assert (report / 'summary.txt').read_text() == proc.stdout
    assert proc.stdout.startswith('size-shape-bench acceptance on generic: NOTHING JUDGED '
                                  '(exit 3)')
    assert json.loads((report / 'reframe-report.json').read_text())['session_info']['uuid'] \
        == summary['session']
    assert (report / 'report' / 'generic-summary.md').exists()
    assert (report / 'report' / 'generic-lrfs-vs-hrvs.png').read_bytes()[:4] == b'\x89PNG'
    # The dashboard of the system's stored runs: the latest page is latest/dashboard/.
    page = (report / 'dashboard' / 'index.html').read_text()
    assert '<title>size-shape-bench history: generic</title>' in page
    assert summary['session'] in page


def test_a_second_run_is_refused_while_one_holds_the_lock(first_run):
    tmp, _ = first_run
    with open(tmp / 'out' / '.lock', 'r+') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock.write('pid 4711 on elsewhere, since then\n')
        lock.flush()
        proc = acceptance('--out', tmp / 'out', *TINY, cwd=REPO, env=generic_env(tmp))
    assert proc.returncode == 2
    assert 'another ssb-acceptance run holds' in proc.stderr and 'pid 4711' in proc.stderr
    assert len(reports(tmp / 'out')) == 1


def test_references_from_update_make_the_next_night_judged(first_run):
    """The way out of exit 3 before 3 nights: references made from the first night."""
    tmp, _ = first_run
    update = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), 'ssb-references'), 'update', '--system',
         'generic', '--db', tmp / 'results.db', '--reference-dir', tmp / 'references',
         # one sub-second run on a machine shared with other trainings: its first-epoch
         # figures moved by +150% from one run to the next (what is tested here is exit 0
         # once judged; the threshold rule is test_references.py's)
         '--min-runs', '1', '--min-tolerance', '4'],
        capture_output=True, text=True, cwd=tmp)
    assert update.returncode == 0, update.stderr
    proc = acceptance('--out', tmp / 'out', *TINY, cwd=REPO, env=generic_env(tmp))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith('size-shape-bench acceptance on generic: PASSED (exit 0)')
    summary = json.loads((tmp / 'out' / 'latest' / 'summary.json').read_text())
    judged = re.search(r', (\d+) against the references', summary['notes'][0])
    assert judged and int(judged.group(1)) >= 10, summary['notes']


def test_a_killed_run_leaves_the_reports_intact(first_run):
    tmp, _ = first_run
    out = tmp / 'out'
    before, latest = reports(out), os.readlink(out / 'latest')
    status = json.loads((out / 'latest' / 'summary.json').read_text())['exit_status']
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(('RFM_', 'SSB_'))}
    proc = subprocess.Popen([SSB_ACCEPTANCE, '--out', str(out), *TINY], cwd=REPO,
                            env={**full_env, **generic_env(tmp)}, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    reframe = None
    try:   # kill it while ReFrame is running: once its log has a first test's line
        deadline = time.time() + 120
        while time.time() < deadline:
            logs = list((out / 'reports').glob('.incomplete-*/reframe.log'))
            if logs and 'RUN' in logs[0].read_text():
                break
            time.sleep(0.2)
        else:
            pytest.fail('ReFrame never started')
        with open(f'/proc/{proc.pid}/task/{proc.pid}/children') as f:
            (reframe,) = map(int, f.read().split())
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    # ReFrame, in a process group of its own, dies with its parent (the parent-death signal).
    deadline = time.time() + 60
    while os.path.exists(f'/proc/{reframe}') and time.time() < deadline:
        time.sleep(0.2)
    assert not os.path.exists(f'/proc/{reframe}'), 'ReFrame outlived the killed command'
    assert reports(out) == before and os.readlink(out / 'latest') == latest
    assert json.loads((out / 'latest' / 'summary.json').read_text())['exit_status'] == status
    # The next run is not blocked by the dead one and removes what it left.
    again = acceptance('--out', out, *TINY, cwd=REPO, env=generic_env(tmp))
    # judged against the references of the test before (the machine decides), or, without
    # them, nothing judged
    judged = (tmp / 'references' / 'generic.yaml').exists()
    assert again.returncode in ((0, 1) if judged else (3,)), again.stdout + again.stderr
    assert not list((out / 'reports').glob('.incomplete-*'))
    assert len(reports(out)) == len(before) + 1


class _Hook(http.server.BaseHTTPRequestHandler):
    received = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers['Content-Length']))
        self.received.append((self.headers['Content-Type'], self.headers.get('Authorization'),
                              json.loads(body)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_baseline_judges_against_a_session_and_the_webhook_hears_it(first_run):
    tmp, _ = first_run
    baseline = json.loads((tmp / 'out' / 'latest' / 'summary.json').read_text())['session']
    server = http.server.HTTPServer(('127.0.0.1', 0), _Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f'http://127.0.0.1:{server.server_port}/ssb'
        proc = acceptance('--out', tmp / 'out', '--baseline', baseline, '--webhook', url, *TINY,
                          cwd=REPO, env={**generic_env(tmp),
                                         'SSB_ACCEPTANCE_WEBHOOK_AUTH': 'Bearer t0ken'})
    finally:
        server.shutdown()
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr     # the machine decides
    assert f'judged against baseline session {baseline}' in proc.stdout
    ((content_type, auth, summary),) = _Hook.received
    assert content_type == 'application/json' and auth == 'Bearer t0ken'
    assert summary['judged_against'] == f'baseline session {baseline}'
    assert summary['exit_status'] == proc.returncode
    # Each listed change is beyond the variable's floor, on the side it is listed on.
    for item in summary['regressed'] + summary['improved']:
        assert abs(item['change_pct']) > abs(item['limit_pct'])


def test_once_three_sessions_are_stored_each_value_is_judged_against_their_history(first_run):
    tmp, _ = first_run
    out = tmp / 'out'
    while len(reports(out)) < 3:           # the earlier tests of this module stored some
        assert acceptance('--out', out, *TINY, cwd=REPO, env=generic_env(tmp)).returncode in (
            0, 3)                          # 3 before references: nothing judged yet
    proc = acceptance('--out', out, '--confidence', '0.999', *TINY, cwd=REPO,
                      env=generic_env(tmp))
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr     # the machine decides
    summary = json.loads((out / 'latest' / 'summary.json').read_text())
    judged = re.match(r'(\d+) value\(s\) judged against the history of their workload '
                      r'\(at least 3 earlier sessions; together, so that an unchanged session '
                      r'raises no alarm with 99.9% confidence\)', summary['notes'][0])
    assert judged and int(judged.group(1)) >= 10, summary['notes']
    for item in summary['regressed'] + summary['improved']:
        # the interval at Benjamini-Hochberg's per-value level: 99.9% or more
        assert re.match(r'history .* \(99\.9\d*%, n=\d+\)', item['judged_against']), item
        assert abs(item['change_pct']) > abs(item['limit_pct'])


def test_an_unreachable_webhook_is_a_warning(first_run, tmp_path):
    tmp, _ = first_run
    proc = acceptance('--out', tmp_path / 'out', '--dry-run', '--webhook', 'http://127.0.0.1:9/',
                      *TINY, cwd=REPO, env=generic_env(tmp))
    assert proc.returncode == 0 and 'DRY RUN' in proc.stdout     # dry runs post nothing
    assert reports(tmp_path / 'out') == []


def test_outside_the_repository_it_says_where_the_tests_are(tmp_path):
    proc = acceptance('--out', tmp_path / 'out', cwd=tmp_path)
    assert proc.returncode == 2
    assert 'no size-shape-bench tests in' in proc.stderr and '--checks DIR' in proc.stderr


# -- the exit statuses through the CI Slurm cluster -------------------------------------

def test_exit_statuses_through_slurm(shared_tmp_path):
    tmp_path = shared_tmp_path           # the cluster's nodes see it: their /tmp is their own
    env = {**cluster_env(tmp_path), 'RFM_REFERENCE_PREFIX': str(tmp_path)}
    (tmp_path / 'references').mkdir()
    out = tmp_path / 'out'
    clean = acceptance('-C', CI_CONFIG, '--out', out, *TINY, cwd=REPO, env=env)
    assert clean.returncode == 3, clean.stdout + clean.stderr      # a first night
    assert 'acceptance on ci: NOTHING JUDGED (exit 3)' in clean.stdout
    summary = json.loads((out / 'latest' / 'summary.json').read_text())
    assert summary['counts'] == PASSED_ONE
    # References stricter than the machine: ReFrame fails them, the command says by how much.
    (tmp_path / 'references' / 'ci.yaml').write_text('''TrainingTest:
  $index: [$partition, variant, model, scale]
  ci:cpu:
    lrfs:
      smallcnn:
        single:
          steady_epoch_time: [0.0001, null, 0.1, s]
''')
    strict = acceptance('-C', CI_CONFIG, '--out', out, *TINY, cwd=REPO, env=env)
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert 'PERFORMANCE DRIFT (exit 1)' in strict.stdout
    assert re.search(r'regressed \(1\):\n  TrainingTest .*@ci:cpu: steady_epoch_time .* vs '
                     r'0\.0001 \(\+\d+\.\d%, limit \+10\.0%\)', strict.stdout)
    assert f'largest changes since the previous session {summary["session"]}' in strict.stdout
    # A partition whose environment's module does not exist: the tests cannot run.
    broken = acceptance('-C', missing_module_config(tmp_path), '--out', out, *TINY, cwd=REPO,
                        env=env)
    assert broken.returncode == 2, broken.stdout + broken.stderr
    assert 'TESTS FAILED TO RUN (exit 2)' in broken.stdout
    assert 'size-shape-bench/no-such-version' in broken.stdout
    assert len(reports(out)) == 3
