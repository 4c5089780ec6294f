"""ssb-acceptance against a hostile --out and webhook: planted links are never followed,
a bad URL is refused before the run, the Authorization header stays with its host."""
import http.server
import json
import os
import subprocess
import sys
import threading

import pytest
from conftest import REPO

from ssb_references.acceptance import outdir, webhook

SSB_ACCEPTANCE = os.path.join(os.path.dirname(sys.executable), 'ssb-acceptance')


def acceptance(*args, cwd=REPO, env=None):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(('RFM_', 'SSB_'))}
    full_env.update(env or {})
    return subprocess.run([SSB_ACCEPTANCE, *map(str, args)], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=300)


def error_line(proc):
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert 'Traceback' not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()[-1:]
    return line


@pytest.fixture
def victim(tmp_path):
    path = tmp_path / 'victim.txt'
    path.write_text('precious\n')
    return path


def test_a_link_planted_as_the_lock_is_not_followed(tmp_path, victim):
    out = tmp_path / 'out'
    out.mkdir()
    (out / '.lock').symlink_to(victim)
    line = error_line(acceptance('--out', out, '--dry-run'))
    assert line == f'ssb-acceptance: error: {out}/.lock is a symbolic link: refusing to follow ' \
                   f'it (remove it)'
    assert victim.read_text() == 'precious\n'


@pytest.mark.parametrize('name', ['reports', 'reframe'])
def test_a_link_planted_as_a_directory_is_not_followed(tmp_path, name):
    out, elsewhere = tmp_path / 'out', tmp_path / 'elsewhere'
    out.mkdir()
    elsewhere.mkdir()
    (out / name).symlink_to(elsewhere)
    line = error_line(acceptance('--out', out, '--dry-run'))
    assert line.endswith(f'{out}/{name} is a symbolic link: refusing to follow it (remove it)')
    assert os.listdir(elsewhere) == []


def test_only_the_regular_summaries_of_published_reports_say_what_was_judged(tmp_path, capsys):
    """The sessions judged under --out (the previous session is one of them) come from each
    report's summary.json: no link followed, no FIFO read, a malformed one left out."""
    reports, elsewhere = tmp_path / 'out' / 'reports', tmp_path / 'elsewhere'
    elsewhere.mkdir()
    (elsewhere / 'summary.json').write_text(json.dumps({'session': 'planted'}))

    def report(stamp, text=None):
        (reports / stamp).mkdir(parents=True)
        if text is not None:
            (reports / stamp / 'summary.json').write_text(text)
        return reports / stamp / 'summary.json'
    report('20270101T000000Z', json.dumps({'session': 'judged'}))
    report('.incomplete-20270102T000000Z-x', json.dumps({'session': 'killed'}))
    report('20270103T000000Z', json.dumps({'session': None}))   # ReFrame stored no session
    report('20270104T000000Z', '{"session": "tor')
    report('20270105T000000Z', '["session"]')
    report('20270106T000000Z')
    report('20270107T000000Z').symlink_to(elsewhere / 'summary.json')
    os.mkfifo(report('20270108T000000Z'))
    (reports / '20270109T000000Z').symlink_to(elsewhere)
    assert outdir.judged_sessions(tmp_path / 'out') == {'judged'}
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (f'warning: 6 report(s) under {reports} without a readable summary.json '
                    f'(e.g. {reports}/20270104T000000Z/summary.json): their sessions count as '
                    f'never judged here')


def test_an_out_everyone_may_write_to_is_refused(tmp_path):
    out = tmp_path / 'shared'
    out.mkdir()
    out.chmod(0o777)
    line = error_line(acceptance('--out', out, '--dry-run'))
    assert line == (f'ssb-acceptance: error: {out} is writable by every user and has no '
                    f'sticky bit: anyone could plant links in it; chmod o-w (or +t) it first')
    assert os.listdir(out) == []


def test_a_sticky_out_like_tmp_is_taken(tmp_path):
    out = tmp_path / 'sticky'
    out.mkdir()
    out.chmod(0o1777)
    proc = acceptance('--out', out, '--dry-run', '--', '-n', 'TrainingTest.*lrfs.*single',
                      env={'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db')})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'DRY RUN' in proc.stdout


NOT_HTTP = 'is not an http:// or https:// URL with a host'


@pytest.mark.parametrize('url, why', [
    ('file:///etc/passwd', NOT_HTTP), ('hooks.example.org/ssb', NOT_HTTP),
    ('ftp://h/x', NOT_HTTP), ('http://', NOT_HTTP), ('javascript:alert(1)', NOT_HTTP),
    ('http://h:port/', "Port could not be cast to integer value as 'port'")])
def test_a_webhook_that_is_not_http_is_refused_before_the_run(tmp_path, url, why):
    out = tmp_path / 'out'
    for proc in (acceptance('--out', out, '--webhook', url),
                 acceptance('--out', out, env={'SSB_ACCEPTANCE_WEBHOOK_URL': url})):
        assert proc.returncode == 2 and 'Traceback' not in proc.stderr
        assert f'argument --webhook: {url!r}' in proc.stderr and why in proc.stderr, proc.stderr
        assert not out.exists()                       # nothing ran


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Records each request's path and Authorization header; answers as ``answer`` says."""

    def _record(self):
        self.server.seen.append((self.command, self.path, self.headers.get('Authorization')))
        length = int(self.headers.get('Content-Length') or 0)
        self.rfile.read(length)
        status, location = self.server.answer
        self.send_response(status)
        if location:
            self.send_header('Location', location)
        self.end_headers()

    do_GET = do_POST = _record

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    servers = []

    def start(status=204, location=None):
        s = http.server.HTTPServer(('127.0.0.1', 0), _Recorder)
        s.seen, s.answer = [], (status, location)
        threading.Thread(target=s.serve_forever, daemon=True).start()
        servers.append(s)
        return s
    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def test_a_redirect_to_another_host_never_gets_the_authorization(server):
    other = server()
    # 'localhost' is another host name than 127.0.0.1 to the client: a header meant for
    # one host name must not be sent to another.
    hook = server(302, f'http://localhost:{other.server_port}/steal')
    why = webhook.post(f'http://127.0.0.1:{hook.server_port}/ssb', {'a': 1}, 'Bearer t0ken')
    assert why == (f'HTTP Error 302: redirected to http://localhost:{other.server_port}/steal, '
                   f'not followed (give the final URL)')
    assert hook.seen == [('POST', '/ssb', 'Bearer t0ken')]
    assert other.seen == []


def test_a_webhook_that_hears_returns_none_and_a_failure_is_one_line(server):
    hook = server(204)
    assert webhook.post(f'http://127.0.0.1:{hook.server_port}/ssb', {}, 'Bearer x') is None
    assert hook.seen == [('POST', '/ssb', 'Bearer x')]
    broken = server(500)
    why = webhook.post(f'http://127.0.0.1:{broken.server_port}/ssb', {})
    assert why == 'HTTP Error 500: Internal Server Error'
    closed = server()
    port = closed.server_port
    closed.shutdown()
    closed.server_close()
    why = webhook.post(f'http://127.0.0.1:{port}/', {})
    assert '\n' not in why and 'refused' in why


def test_a_mode_that_is_not_a_name_is_refused_before_the_run(tmp_path):
    proc = acceptance('--out', tmp_path / 'out', '--dry-run', '--mode', 'http://')
    assert proc.returncode == 2 and 'Traceback' not in proc.stderr
    assert "argument --mode: 'http://' is not a mode name" in proc.stderr
    assert not (tmp_path / 'out').exists()


def test_a_reframe_traceback_is_cut_to_its_error(tmp_path):
    # Past ssb-acceptance's own checks (after --), ReFrame fails with a traceback of its own.
    proc = acceptance('--out', tmp_path / 'out', '--dry-run', '--', '--mode', 'http://')
    assert proc.returncode == 2 and 'Traceback' not in proc.stderr, proc.stderr
    assert 'ReFrame ran no test (exit status 1):' in proc.stderr
    assert proc.stderr.strip().endswith('IndexError: string index out of range')
