"""Names read from data are names, never paths, and nothing is written outside the directory
the user named nor through a link planted in it (docs/hostile-input.md). Real perflogs
through the real CLI, in-process."""
import os

import pytest

from reference_runs import STEADY, record, run_cli, write_perflog


@pytest.fixture
def perflogs(tmp_path):
    """Runs of 'generic' and, copied in from elsewhere, of systems named like paths."""
    d = tmp_path / 'site' / 'perflogs'
    good = [record(s, i) for i, s in enumerate(STEADY)]
    write_perflog(d / 'generic' / 'default' / 'TrainingTest.log', good)
    for n, (system, partition) in enumerate([(str(tmp_path / 'abs'), 'default'),
                                             ('../../escaped', 'default'),
                                             ('generic', '../../p')]):
        recs = [record(s, 10 + i, system=system, partition=partition)
                for i, s in enumerate(STEADY)]
        write_perflog(d / 'generic' / f'copied{n}' / 'TrainingTest.log', recs)
    return d


def yaml_files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob('*.yaml'))


def test_runs_named_like_paths_are_left_out_by_name(tmp_path, perflogs, capsys):
    refs = tmp_path / 'site' / 'refs'
    status, out, err = run_cli(capsys, 'update', '--perflog-dir', perflogs,
                               '--reference-dir', refs)
    assert status == 0 and f'wrote {refs}/generic.yaml' in out
    rule = 'is not one ReFrame takes (a letter or _, then letters, digits, _ and -)'
    assert err.splitlines() == [
        f"warning: {perflogs}/generic/copied0/TrainingTest.log: runs left out: their system "
        f"name '{tmp_path}/abs' {rule}",
        f"warning: {perflogs}/generic/copied1/TrainingTest.log: runs left out: their system "
        f"name '../../escaped' {rule}",
        f"warning: {perflogs}/generic/copied2/TrainingTest.log: runs left out: their partition "
        f"name 'generic:../../p' {rule}"]
    assert yaml_files(tmp_path) == ['site/refs/generic.yaml']
    status, out, _ = run_cli(capsys, 'report', '--perflog-dir', perflogs, '--reference-dir',
                             refs, '--out', tmp_path / 'site' / 'report', '--no-plots')
    assert status == 0
    assert sorted(os.listdir(tmp_path)) == ['site']
    assert sorted(os.listdir(tmp_path / 'site')) == ['perflogs', 'refs', 'report']


@pytest.mark.parametrize('system', ['../x', '/etc/x', 'a b', '.hidden'])
def test_a_system_option_that_is_no_reframe_name_is_one_error_line(tmp_path, perflogs,
                                                                    capsys, system):
    status, out, err = run_cli(capsys, 'update', '--perflog-dir', perflogs, '--system', system,
                               '--reference-dir', tmp_path / 'refs')
    assert status == 2 and err.splitlines()[-1] == (
        f"ssb-references update: error: system name {system!r} is not one ReFrame takes (a "
        f"letter or _, then letters, digits, _ and -): refusing to build a file name from it")
    assert yaml_files(tmp_path) == []


@pytest.mark.parametrize('command, name', [('report', 'generic-summary.md'),
                                           ('compare', 'compare.csv')])
def test_out_replaces_a_planted_link_never_writes_through_it(tmp_path, perflogs, capsys,
                                                             command, name):
    out, victim = tmp_path / 'shared-out', tmp_path / 'victim'
    out.mkdir()
    victim.write_text('precious\n')
    (out / name).symlink_to(victim)
    args = ['--system', 'generic', '--before', '..2023-11-14T22:14:50', '--after',
            '2023-11-14T22:14:50..'] if command == 'compare' else []
    status, stdout, err = run_cli(capsys, command, '--perflog-dir', perflogs, *args,
                                  '--out', out, '--no-plots')
    assert status == 0 and f'wrote {out}/{name}' in stdout, err
    assert not os.path.islink(out / name) and (out / name).read_text() != 'precious\n'
    assert victim.read_text() == 'precious\n'
    assert not [p for p in os.listdir(out) if p.startswith('.partial-')]


@pytest.mark.parametrize('command', ['report', 'compare'])
def test_out_writable_by_everyone_without_sticky_bit_is_refused(tmp_path, perflogs, capsys,
                                                               command):
    out = tmp_path / 'open'
    out.mkdir()
    out.chmod(0o777)
    sides = ['--system', 'generic', '--before', '..2023-11-14T22:14:50', '--after',
             '2023-11-14T22:14:50..'] if command == 'compare' else []
    status, _, err = run_cli(capsys, command, '--perflog-dir', perflogs, *sides, '--out', out,
                             '--no-plots')
    assert status == 2 and err.splitlines()[-1] == (
        f'ssb-references {command}: error: {out} is writable by every user and has no sticky '
        f'bit: anyone could plant links in it; chmod o-w (or +t) it first')
    assert os.listdir(out) == []
