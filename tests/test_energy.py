"""Energy counters: RAPL and Cray pm_counters arithmetic against sysfs trees written here,
the order of sources, and the reason a machine without counters (this one) gives."""
import json

import pytest

from conftest import run_payload
from payload import energy


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'{text}\n')


def rapl_tree(root, package_uj, dram_uj, core_uj=5, max_range=2**32 - 1):
    for zone, name, value in (('intel-rapl:0', 'package-0', package_uj),
                              ('intel-rapl:0:0', 'core', core_uj),
                              ('intel-rapl:0:1', 'dram', dram_uj)):
        write(root / zone / 'name', name)
        write(root / zone / 'energy_uj', value)
        write(root / zone / 'max_energy_range_uj', max_range)


def test_rapl_sums_package_and_dram_only(tmp_path):
    rapl_tree(tmp_path, 1_000_000, 200_000)
    meter = energy.Rapl(str(tmp_path))
    before = meter.read()
    rapl_tree(tmp_path, 51_000_000, 5_200_000, core_uj=99_000_000)    # core is inside package
    assert meter.joules(before, meter.read()) == pytest.approx(50 + 5)


def test_rapl_undoes_wrap_around(tmp_path):
    top = 262_143_328_850                  # a real max_energy_range_uj
    rapl_tree(tmp_path, top - 2_000_000, 100, max_range=top)
    meter = energy.Rapl(str(tmp_path))
    before = meter.read()
    rapl_tree(tmp_path, 3_000_000, 1_100, max_range=top)          # the package counter wrapped
    assert meter.joules(before, meter.read()) == \
        pytest.approx((2_000_001 + 3_000_000 + 1_000) / 1e6)
    assert energy.wrapped_delta(10, 4, 15) == 10


def test_rapl_reports_unreadable_counters(tmp_path, monkeypatch):
    rapl_tree(tmp_path, 1, 1)
    real = energy._read_text

    def root_only(path):
        if path.endswith('energy_uj'):
            raise PermissionError(13, 'Permission denied', path)
        return real(path)
    monkeypatch.setattr(energy, '_read_text', root_only)
    with pytest.raises(energy.Unavailable, match=r'energy_uj is not readable \(root-only since '
                                                 r'Linux 5\.10'):
        energy.Rapl(str(tmp_path))


def test_rapl_without_domains_and_missing_tree(tmp_path):
    with pytest.raises(energy.Unavailable, match='missing'):
        energy.Rapl(str(tmp_path / 'nothing'))
    write(tmp_path / 'intel-rapl:0:0' / 'name', 'core')
    with pytest.raises(energy.Unavailable, match='no RAPL package or DRAM domain'):
        energy.Rapl(str(tmp_path))


def test_cray_pm_counters(tmp_path):
    write(tmp_path / 'energy', '123456 J')
    meter = energy.CrayPm(str(tmp_path))
    before = meter.read()
    write(tmp_path / 'energy', '123999 J')
    assert meter.joules(before, meter.read()) == 543


def test_first_readable_source_is_used_and_reasons_are_kept(tmp_path):
    write(tmp_path / 'cray' / 'energy', '10 J')

    class Cray(energy.CrayPm):
        def __init__(self):
            super().__init__(str(tmp_path / 'cray'))

    class NoRapl(energy.Rapl):
        def __init__(self):
            super().__init__(str(tmp_path / 'powercap'))

    meter, why = energy.open_meter((NoRapl, Cray))
    assert meter.name == 'cray_pm' and why is None
    meter, why = energy.open_meter((NoRapl,))
    assert meter is None and why == f'not available: {tmp_path / "powercap"} missing'


def test_epoch_energy_fields(tmp_path):
    write(tmp_path / 'energy', '1000 J')
    meter = energy.CrayPm(str(tmp_path))
    epoch = energy.EpochEnergy(meter)
    started = epoch.start()
    write(tmp_path / 'energy', '1600 J')
    assert epoch.record(started, seconds=3.0, images=120) == {
        'energy_j': 600.0, 'energy_per_image_j': 5.0, 'mean_power_w': 200.0}
    assert energy.EpochEnergy(None).record(None, 1.0, 1)['energy_j'] is None
    note = energy.resolution_note(meter, 0.5)
    assert '100 ms' in note and '40%' in note


def test_this_machine_reports_energy_as_not_available(tiny_dataset):
    if energy.open_meter()[0] is not None:
        pytest.skip('this machine has energy counters')
    proc = run_payload('--variant', 'hrvs', '--data-dir', tiny_dataset, '--epochs', '2',
                       '--pixel-budget', '2k', '--input-probe-seconds', '0')
    assert proc.returncode == 0, proc.stderr
    (line,) = [text for text in proc.stderr.splitlines() if text.startswith('energy: ')]
    summary = json.loads([text for text in proc.stdout.splitlines()
                          if text.startswith('SSB-SUMMARY ')][0].split(' ', 1)[1])
    assert summary['energy_source'] is None and summary['energy_per_epoch_j'] is None
    assert line == f'energy: {summary["energy_note"]}'
    assert summary['energy_note'].startswith('not available: ')
    assert '/sys/class/powercap missing' in summary['energy_note']
