"""payload/provenance.py: the suite's installed version and the git revision of a checkout,
read from a real distribution's metadata and real git repositories."""
import subprocess
import sys

import pytest

from ssb_common import provenance


@pytest.fixture(autouse=True)
def fresh_cache():
    provenance.git_revision.cache_clear()
    yield
    provenance.git_revision.cache_clear()


def git(repo, *args):
    return subprocess.run(['git', '-C', str(repo), '-c', 'user.name=t', '-c', 'user.email=t@t',
                           *args], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def checkout(tmp_path):
    repo = tmp_path / 'repo'
    repo.mkdir()
    git(repo, 'init', '-q')
    (repo / 'a.py').write_text('one\n')
    git(repo, 'add', 'a.py')
    git(repo, 'commit', '-q', '-m', 'first')
    return repo


def test_version_is_the_installed_distribution_s(tmp_path, monkeypatch):
    info = tmp_path / 'size_shape_bench-9.8.7.dist-info'
    info.mkdir()
    (info / 'METADATA').write_text('Metadata-Version: 2.1\nName: size-shape-bench\n'
                                   'Version: 9.8.7\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    assert provenance.suite_version() == '9.8.7'


def test_no_version_where_the_suite_is_not_installed(monkeypatch):
    # Only the standard library's own paths: no size-shape-bench anywhere on them.
    # (The checkout is left out too: an install leaves its .egg-info in it.)
    monkeypatch.setattr(sys, 'path', [p for p in sys.path if p.startswith(sys.base_prefix)
                                      and 'site-packages' not in p])
    assert provenance.suite_version() is None


def test_revision_of_a_clean_checkout_is_its_commit(checkout):
    head = git(checkout, 'rev-parse', 'HEAD')
    assert len(head) == 40
    assert provenance.git_revision(str(checkout)) == head
    # Any path inside the checkout names the same revision.
    (checkout / 'sub').mkdir()
    assert provenance.git_revision(str(checkout / 'sub')) == head


def test_changed_tracked_files_make_it_dirty_untracked_ones_do_not(checkout):
    head = git(checkout, 'rev-parse', 'HEAD')
    (checkout / 'new.py').write_text('untracked\n')
    assert provenance.git_revision(str(checkout)) == head
    provenance.git_revision.cache_clear()
    (checkout / 'a.py').write_text('two\n')
    assert provenance.git_revision(str(checkout)) == f'{head}-dirty'


def test_asked_once_per_path(checkout):
    head = git(checkout, 'rev-parse', 'HEAD')
    assert provenance.git_revision(str(checkout)) == head
    (checkout / 'a.py').write_text('two\n')
    assert provenance.git_revision(str(checkout)) == head          # cached for the session
    assert provenance.git_revision.cache_info().hits == 1


def test_no_revision_outside_a_checkout(tmp_path):
    assert provenance.git_revision(str(tmp_path)) is None
    assert provenance.git_revision(str(tmp_path / 'missing')) is None


def test_no_revision_without_git(checkout, monkeypatch):
    monkeypatch.setenv('PATH', '')
    assert provenance.git_revision(str(checkout)) is None
