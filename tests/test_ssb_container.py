"""ssb-container's parts that need no Charliecloud: the pip sources it passes to the build,
and the build context whose unchanged files keep their times (tests/test_container.py
builds the image)."""
import os

import pytest

from conftest import REPO
from ssb_container import build, cli, pip_sources


def test_local_pip_sources_are_bound_and_rewritten(tmp_path):
    mirror = tmp_path / 'pypi'
    (mirror / 'simple').mkdir(parents=True)
    wheels = tmp_path / 'wheels'
    (wheels / 'sub').mkdir(parents=True)
    cert = tmp_path / 'certs' / 'bundle.crt'
    cert.parent.mkdir()
    cert.write_text('')
    settings = {'index-url': 'https://proxy.example/simple',
                'extra-index-url': f'file://{mirror}/simple file://{tmp_path}/gone/simple',
                'find-links': f'{wheels} {wheels}/sub', 'cert': str(cert),
                'trusted-host': 'proxy.example'}
    args, binds = pip_sources.build_args(settings)
    # An index goes with the directory around it (its pages link to ../../files/...); a
    # path that does not exist is left out, as pip skips it; one under another shares its bind.
    assert binds == [f'{mirror}:/mnt/0', f'{wheels}:/mnt/1', f'{cert.parent}:/mnt/2']
    assert args == ['PIP_CERT=/mnt/2/bundle.crt', 'PIP_EXTRA_INDEX_URL=file:///mnt/0/simple',
                    'PIP_FIND_LINKS=/mnt/1 /mnt/1/sub',
                    'PIP_INDEX_URL=https://proxy.example/simple',
                    'PIP_TRUSTED_HOST=proxy.example']
    assert pip_sources.build_args({}) == ([], [])


def test_pip_settings_are_read_from_pip_itself_the_environment_last(tmp_path):
    conf = tmp_path / 'pip.conf'
    conf.write_text('[global]\nindex-url = https://file.example/simple\n'
                    'find-links = /from/file\n')
    env = {'PIP_CONFIG_FILE': str(conf), 'PIP_FIND_LINKS': '/from/env', 'HOME': str(tmp_path),
           'PATH': os.environ['PATH']}
    saved = dict(os.environ)
    try:
        os.environ.clear()
        os.environ.update(env)
        found = pip_sources.host_settings()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    assert found['find-links'] == '/from/env'
    assert found['index-url'] == 'https://file.example/simple'


def test_the_context_keeps_unchanged_files_and_their_times(tmp_path):
    context = str(tmp_path / 'context')
    assert build.sync_context(REPO, context) > 0
    copied = os.path.join(context, 'payload', 'run.py')
    os.utime(copied, (1, 1))
    assert not any(d == '__pycache__' for _, dirs, _ in os.walk(context) for d in dirs)
    assert build.sync_context(REPO, context) == 0
    assert os.stat(copied).st_mtime == 1                 # ch-image's cache key unchanged
    stale = os.path.join(context, 'payload', 'gone.py')
    with open(stale, 'w') as f:
        f.write('')
    with open(os.path.join(context, 'setup.cfg'), 'a') as f:
        f.write('# edited\n')
    assert build.sync_context(REPO, context) == 2      # removed, and copied again
    assert not os.path.exists(stale)
    with pytest.raises(build.BuildError, match='not a size-shape-bench checkout'):
        build.sync_context(str(tmp_path), context)


def test_a_directory_that_is_no_checkout_is_named(tmp_path):
    assert cli.checkout(REPO) == REPO
    with pytest.raises(build.BuildError, match=f'{tmp_path} is not a size-shape-bench '
                                               'checkout'):
        cli.checkout(str(tmp_path))


def test_the_context_is_what_the_dockerfile_copies_and_holds_every_package():
    """A package the install takes but the build context leaves out breaks only the image."""
    import configparser
    with open(os.path.join(REPO, build.DOCKERFILE)) as f:
        copied = [word for line in f if line.startswith('COPY ')
                  for word in line.split()[1:-1]]
    assert sorted(copied) == sorted(build.CONTEXT)
    setup = configparser.ConfigParser()
    setup.read(os.path.join(REPO, 'setup.cfg'))
    packages = {p.split('.')[0] for p in setup['options.packages.find']['include'].split()}
    assert packages <= set(build.CONTEXT), packages - set(build.CONTEXT)


def test_one_build_at_a_time_per_storage(tmp_path):
    """A second build on the same cache waits, saying so, until the first is done."""
    import subprocess
    import sys
    cache = tmp_path / 'root.ch.ssb'
    code = ('import sys; from ssb_container import build\n'
            'with build.one_at_a_time(sys.argv[1]): print("in", flush=True)')
    with build.one_at_a_time(str(cache)):
        second = subprocess.Popen([sys.executable, '-c', code, str(cache)], text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        with pytest.raises(subprocess.TimeoutExpired):
            second.wait(timeout=3)
    out, err = second.communicate(timeout=30)
    assert (second.returncode, out) == (0, 'in\n'), err
    assert err == f'ssb-container: waiting for another ssb-container build on {cache} ...\n'
