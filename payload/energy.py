"""Energy counters read around each epoch: joules, joules per image, mean watts.

Sources, tried in this order (the first that can be read is used, and named):

- ``nvml``: NVIDIA GPUs' cumulative energy (``nvmlDeviceGetTotalEnergyConsumption``,
  millijoules, Volta or newer), summed over the GPUs this process sees;
- ``amdsmi``: AMD GPUs' energy count (``amdsmi_get_energy_count``), summed likewise;
- ``rapl``: the CPUs' RAPL counters under ``/sys/class/powercap`` (package and DRAM
  domains, microjoules), which wrap at ``max_energy_range_uj``;
- ``cray_pm``: Cray's node counters, ``/sys/cray/pm_counters/energy`` (joules).

Nothing is subtracted (no idle baseline). Where no source can be read, there is no
value, and ``unavailable`` says why; never 0. No TensorFlow import.
"""
import glob
import os

POWERCAP = '/sys/class/powercap'
CRAY_PM = '/sys/cray/pm_counters'
# How often each counter is updated, which bounds the error of an epoch's energy
# (at most one update interval of the device's power at each end).
UPDATE_INTERVAL_S = {'nvml': 0.1, 'amdsmi': 0.001, 'rapl': 0.001, 'cray_pm': 0.1}


class Unavailable(Exception):
    """A source that cannot be read here; the message says why."""


class Rapl:
    """RAPL package and DRAM domains (``intel-rapl:N`` and their ``dram`` subzones)."""

    name = 'rapl'

    def __init__(self, root=POWERCAP):
        if not os.path.isdir(root):
            raise Unavailable(f'{root} missing')
        self.domains = []
        for zone in sorted(glob.glob(os.path.join(root, 'intel-rapl:*'))):
            label = _read_text(os.path.join(zone, 'name'))
            if label.startswith('package') or label == 'dram':
                self.domains.append(zone)
        if not self.domains:
            raise Unavailable(f'no RAPL package or DRAM domain in {root}')
        self.ranges = [int(_read_text(os.path.join(z, 'max_energy_range_uj')))
                       for z in self.domains]
        self.read()            # permissions: energy_uj is root-only since Linux 5.10

    def read(self):
        values = []
        for zone in self.domains:
            path = os.path.join(zone, 'energy_uj')
            try:
                values.append(int(_read_text(path)))
            except PermissionError:
                raise Unavailable(f'{path} is not readable (root-only since Linux 5.10; see '
                                  'docs/metrics.md, "Energy")') from None
        return values

    def joules(self, before, after):
        """Energy between two readings, each domain's wrap-around undone."""
        return sum(wrapped_delta(b, a, r) for b, a, r in zip(before, after, self.ranges)) / 1e6


class CrayPm:
    name = 'cray_pm'

    def __init__(self, root=CRAY_PM):
        self.path = os.path.join(root, 'energy')
        if not os.path.exists(self.path):
            raise Unavailable(f'{root} missing')
        self.read()

    def read(self):
        return int(_read_text(self.path).split()[0])       # "123456 J"

    def joules(self, before, after):
        return float(after - before)


class Nvml:
    name = 'nvml'

    def __init__(self):
        try:
            import pynvml
        except ImportError:
            raise Unavailable('no NVML (pip install nvidia-ml-py)') from None
        try:
            pynvml.nvmlInit()
            count = pynvml.nvmlDeviceGetCount()
        except pynvml.NVMLError as err:
            raise Unavailable(f'no NVML device ({err})') from None
        if not count:
            raise Unavailable('no NVML device')
        self.nvml = pynvml
        self.handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        try:
            self.read()
        except pynvml.NVMLError as err:
            raise Unavailable(f'NVML energy counter not supported ({err}; Volta or newer)') \
                from None

    def read(self):
        return sum(self.nvml.nvmlDeviceGetTotalEnergyConsumption(h) for h in self.handles)

    def joules(self, before, after):
        return (after - before) / 1e3                       # millijoules


class AmdSmi:
    name = 'amdsmi'

    def __init__(self):
        try:
            import amdsmi
        except ImportError:
            raise Unavailable('no amdsmi') from None
        try:
            amdsmi.amdsmi_init()
            self.handles = amdsmi.amdsmi_get_processor_handles()
        except amdsmi.AmdSmiException as err:
            raise Unavailable(f'no AMD GPU ({err})') from None
        if not self.handles:
            raise Unavailable('no AMD GPU')
        self.amdsmi = amdsmi
        self.read()

    def read(self):
        counts = [self.amdsmi.amdsmi_get_energy_count(h) for h in self.handles]
        return sum(c['energy_accumulator'] * c['counter_resolution'] for c in counts)

    def joules(self, before, after):
        return (after - before) / 1e6                       # microjoules


def wrapped_delta(before, after, counter_range):
    """``after - before`` of a counter that wraps to 0 after ``counter_range``."""
    return after - before if after >= before else after + (counter_range + 1) - before


def _read_text(path):
    with open(path) as f:
        return f.read().strip()


def open_meter(sources=(Nvml, AmdSmi, Rapl, CrayPm)):
    """(the first source that can be read, None) or (None, why none can)."""
    reasons = []
    for source in sources:
        try:
            return source(), None
        except Unavailable as err:
            reasons.append(str(err))
        except OSError as err:
            reasons.append(f'{source.name}: {err}')
    return None, 'not available: ' + ', '.join(reasons)


class EpochEnergy:
    """Reads the meter at an epoch's start and end."""

    def __init__(self, meter):
        self.meter = meter

    def start(self):
        return self.meter.read() if self.meter else None

    def record(self, started, seconds, images):
        """The epoch's energy fields (None where there is no meter)."""
        if self.meter is None:
            return {'energy_j': None, 'energy_per_image_j': None, 'mean_power_w': None}
        joules = self.meter.joules(started, self.meter.read())
        return {'energy_j': joules, 'energy_per_image_j': joules / max(images, 1),
                'mean_power_w': joules / seconds}


def resolution_note(meter, epoch_seconds):
    """How the counter's update interval bounds the error of the shortest epoch."""
    interval = UPDATE_INTERVAL_S[meter.name]
    share = 2 * interval / epoch_seconds
    return (f'{meter.name} counters update about every {interval * 1000:g} ms: at most '
            f'{100 * share:.2g}% of the shortest epoch ({epoch_seconds:.2f} s) is uncounted '
            'power at its ends')
