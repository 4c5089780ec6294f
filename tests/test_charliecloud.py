"""The Charliecloud platform's job-script lines and image checks, the payload's container
detection and the image digest, without an image (tests/test_container.py runs one)."""
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import REPO
from payload import container
from reframe_tests import charliecloud, environment
from ssb_common import image_digest

Charliecloud = charliecloud.Charliecloud


def platform(**values):
    p = Charliecloud()
    for name, value in values.items():
        setattr(p, name, value)
    return p


def test_the_job_script_lines():
    p = platform(image=shlex.quote('/images/a b'), command='python3 -m payload --data-dir /mnt/0',
                 mount_points=[('/data/x y', '/mnt/0'), ('/scratch', '/mnt/1')],
                 options=['--private-tmp'])
    assert p.emit_prepare_commands('/stage') == ['export USER="${USER:-$(id -un)}"']
    line = p.launch_command('/stage/T 1')
    assert shlex.split(line) == [
        'ch-run', '--set-env', '--unset-env=PYTHONPATH', '--unset-env=PYTHONHOME',
        '--unset-env=PYTHONSTARTUP', '--unset-env=PYTHONUSERBASE',
        '--bind=/data/x y:/mnt/0', '--bind=/scratch:/mnt/1', '--bind=/stage/T 1:/rfm_workdir',
        '--cd=/rfm_workdir', '--private-tmp', '/images/a b', '--',
        'python3', '-m', 'payload', '--data-dir', '/mnt/0']
    # Called again (ReFrame may), the same line: the stage directory is not mounted twice.
    assert p.launch_command('/stage/T 1') == line
    assert p.name == 'Charliecloud' and charliecloud.PLATFORMS['Charliecloud'] is Charliecloud


def test_without_stage_mount_or_workdir():
    p = platform(image='/img', command='true', mount_stagedir=None, workdir=None)
    assert p.launch_command('/stage') == ('ch-run --set-env --unset-env=PYTHONPATH '
                                          '--unset-env=PYTHONHOME --unset-env=PYTHONSTARTUP '
                                          '--unset-env=PYTHONUSERBASE /img -- true')


def test_mounts_go_to_the_image_mount_points_and_arguments_follow(tmp_path):
    data = tmp_path / 'data'
    data.mkdir()
    packed = tmp_path / 'packed' / 'mame.h5'
    packed.parent.mkdir()
    packed.write_bytes(b'')
    dirs = environment.mount_dirs([str(data), str(packed), '', None, 'relative', str(data)])
    assert dirs == [str(data), str(packed.parent)]       # a file: its directory, each once
    pairs = Charliecloud.destinations(dirs)
    assert pairs == [(str(data), '/mnt/0'), (str(packed.parent), '/mnt/1')]
    assert environment.in_container(str(packed), pairs) == '/mnt/1/mame.h5'
    assert environment.in_container(str(data), pairs) == '/mnt/0'
    assert environment.in_container(str(data) + '2', pairs) == str(data) + '2'   # not under it
    assert environment.in_container('--epochs', pairs) == '--epochs'
    with pytest.raises(charliecloud.ImageError, match='11 directories to mount'):
        Charliecloud.destinations([f'/d{i}' for i in range(11)])


def fake_image(root):
    for path in ('bin/sh', 'etc/passwd'):
        os.makedirs(os.path.dirname(root / path), exist_ok=True)
        (root / path).write_text('')
    for path in ['rfm_workdir'] + [f'mnt/{i}' for i in range(10)]:
        os.makedirs(root / path)
    return str(root)


def refusal(image):
    with pytest.raises(charliecloud.ImageError) as err:
        Charliecloud.check_image(image)
    return str(err.value)


def test_what_is_not_an_image_is_refused(tmp_path):
    assert 'does not exist' in refusal(str(tmp_path / 'none'))
    os.symlink(tmp_path / 'none', tmp_path / 'dangling')
    assert 'does not exist' in refusal(str(tmp_path / 'dangling'))
    text = tmp_path / 'notes.txt'
    text.write_text('hello')
    assert refusal(str(text)) == (f"'{text}' is not a container image: Charliecloud runs a "
                                  f"directory or a SquashFS file")
    assert 'it has no /bin/sh, /etc/passwd, /rfm_workdir, /mnt/0' in refusal(str(tmp_path))
    Charliecloud.check_image(fake_image(tmp_path / 'img'))
    squash = tmp_path / 'img.sqfs'
    squash.write_bytes(charliecloud.SQUASHFS_MAGIC + b'\0' * 92)
    Charliecloud.check_image(str(squash))


def test_an_unreadable_image_is_refused():
    """As a user who cannot read it (root reads everything: the check runs as nobody)."""
    setpriv = shutil.which('setpriv')
    if os.getuid() != 0 or not setpriv:
        pytest.skip('needs root and setpriv to take another user')
    top = dir_anyone_may_enter()
    image = fake_image(top / 'img')
    sif = top / 'img.sqfs'
    sif.write_bytes(charliecloud.SQUASHFS_MAGIC)
    os.chmod(image, 0o700)
    os.chmod(sif, 0o600)
    code = ('import sys; from reframe_tests import charliecloud as c\n'
            'for image in sys.argv[1:]:\n'
            '    try: c.Charliecloud.check_image(image)\n'
            '    except c.ImageError as err: print(err)\n')
    hidden = top / 'hidden' / 'img'
    os.makedirs(hidden)
    os.chmod(hidden.parent, 0o700)
    try:
        out = subprocess.run([setpriv, '--reuid=65534', '--regid=65534', '--clear-groups',
                              sys.executable, '-c', code, image, str(sif), str(hidden)],
                             cwd=REPO, capture_output=True, text=True, env={'PYTHONPATH': REPO})
    finally:
        shutil.rmtree(top)
    assert out.stdout.splitlines() == [
        f"container image '{image}' cannot be read",
        f"container image '{sif}' cannot be read: Permission denied",
        f"container image '{hidden}' cannot be read: Permission denied"], out.stderr


def dir_anyone_may_enter():
    """A directory every user may enter (pytest's own are its owner's only)."""
    top = pathlib.Path(tempfile.mkdtemp(prefix='ssb-unreadable-', dir='/var/tmp'))
    os.chmod(top, 0o755)
    return top


MOUNTINFO = {
    'host': '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n'
            '22 27 0:21 / /proc rw,relatime - proc proc rw\n',
    'charliecloud': '27 1 254:0 / / rw - ext4 /dev/vda rw\n'
                    '119 139 254:0 /var/tmp/my\\040img / ro,relatime - ext4 /dev/vda rw\n',
    'apptainer': '500 400 7:0 / / ro,nodev - squashfs /dev/loop0 ro\n',
    'docker': '600 500 0:50 / / rw - overlay overlay rw,lowerdir=/l,upperdir=/u\n',
}


def detect(tmp_path, mounts, environ=None, files=()):
    path = tmp_path / 'mountinfo'
    path.write_text(MOUNTINFO[mounts])
    return container.detect(str(path), environ or {}, lambda f: f in files)


def test_the_payload_tells_a_container_by_its_root(tmp_path):
    assert detect(tmp_path, 'host') == {'container_runtime': 'none',
                                        'container_evidence': '/ is a file system root'}
    # A marker alone is not a container: this VM has a /.dockerenv of its own.
    assert detect(tmp_path, 'host', {'CH_RUNNING': 'Weird Al Yankovic'}, ['/.dockerenv']) == {
        'container_runtime': 'none',
        'container_evidence': "/ is a file system root; CH_RUNNING is there, but / is the host's"}
    assert detect(tmp_path, 'charliecloud', {'CH_RUNNING': 'Weird Al Yankovic'}) == {
        'container_runtime': 'charliecloud',
        'container_evidence': '/ is /var/tmp/my img of /dev/vda (ext4); CH_RUNNING'}
    assert detect(tmp_path, 'apptainer', {'APPTAINER_CONTAINER': '/x.sif'})['container_runtime'] \
        == 'apptainer'
    assert detect(tmp_path, 'docker', files=['/.dockerenv'])['container_runtime'] == 'docker'
    assert detect(tmp_path, 'docker') == {'container_runtime': 'unknown',
                                          'container_evidence': '/ is a overlay file system '
                                                                '(overlay)'}
    assert container.detect(str(tmp_path / 'none'))['container_runtime'] == 'undetermined'
    # This process: on the host here.
    assert container.detect()['container_runtime'] in ('none', 'docker', 'podman', 'unknown')


def test_a_tree_digest_is_of_its_contents(tmp_path):
    a = tmp_path / 'a'
    (a / 'usr' / 'bin').mkdir(parents=True)
    (a / 'usr' / 'bin' / 'python3').write_bytes(b'#!python')
    os.symlink('usr/bin', a / 'bin')
    (a / '.git').mkdir()
    first = image_digest.digest(str(a))
    assert first.startswith('tree-sha256:')
    b = tmp_path / 'b'
    shutil.copytree(a, b, symlinks=True)            # other times, same bytes
    os.utime(b / 'usr' / 'bin' / 'python3', (1, 1))
    assert image_digest.digest(str(b)) == first
    os.chmod(b / 'usr' / 'bin' / 'python3', 0o755)
    assert image_digest.digest(str(b)) != first     # a mode
    os.chmod(b / 'usr' / 'bin' / 'python3', (a / 'usr' / 'bin' / 'python3').stat().st_mode)
    assert image_digest.digest(str(b)) == first
    os.remove(b / 'bin')
    os.symlink('usr', b / 'bin')
    assert image_digest.digest(str(b)) != first     # a link's target
    shutil.rmtree(b / '.git')
    assert image_digest.digest(str(a), leave_out=('.git',)) != first
    (a / 'usr' / 'bin' / 'python3').write_bytes(b'#!python3')
    assert image_digest.digest(str(a)) != first     # a byte
    f = tmp_path / 'img.sif'
    f.write_bytes(b'x')
    assert image_digest.digest(str(f)) == ('sha256:2d711642b726b04401627ca9fbac32f5c8530fb19'
                                            '03cc4db02258717921a4881')


SITE_WITH_PODMAN = '''
site_configuration = {
    'systems': [{'name': 'probe', 'hostnames': ['.*'], 'partitions': [{
        'name': 'cpu', 'scheduler': 'local', 'launcher': 'local', 'environs': ['builtin'],
        'container_platforms': [{'type': 'Podman'}]}]}],
    'environments': [{'name': 'builtin'}],
}
'''


def test_a_platform_nobody_knows_is_named_at_set_up(tmp_path):
    from reframe_runs import run_reframe
    config = tmp_path / 'site.py'
    config.write_text(SITE_WITH_PODMAN)
    proc = run_reframe('--dry-run', '-n', 'TrainingTest.*lrfs.*smallcnn.*single', '-S',
                       'container_image=/images/ssb', cwd=tmp_path, config=config,
                       env={'RFM_COLORIZE': 'n'})
    assert proc.returncode != 0
    assert ("* Reason: image error: the partition probe:cpu declares the container platform "
            "'Podman', which neither ReFrame nor the suite knows (Charliecloud or one of "
            "ReFrame's)") in proc.stdout, proc.stdout[-3000:]
