"""What the payload measures about the machine: memory, devices, versions."""
import os
import platform
import resource
import subprocess
import sys

import keras
import numpy as np
import tensorflow as tf

from payload import PAYLOAD_VERSION
from ssb_common import provenance

DEVICE_MEMORY_ON_CPU = 'not measured: no accelerator (host memory is host_peak_rss_bytes)'


def gpus():
    return tf.config.list_logical_devices('GPU')


def reset_device_peaks():
    for device in gpus():
        tf.config.experimental.reset_memory_stats(device.name)


def device_peak_bytes():
    """Largest peak allocation over the visible GPUs since the last reset; None on CPU."""
    devices = gpus()
    if not devices:
        return None
    return max(tf.config.experimental.get_memory_info(d.name)['peak'] for d in devices)


def host_peak_rss_bytes():
    """Peak resident set size of this process so far (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def host_memory_limit_bytes():
    """The memory this process may use: its cgroup limit if set, else physical memory."""
    limits = [os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES')]
    for path in ('/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'):
        try:
            with open(path) as f:
                value = f.read().strip()
        except OSError:
            continue
        if value.isdigit():
            limits.append(int(value))
    return min(limits)


def cpu_model():
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def device_names():
    names = [f'CPU: {cpu_model()} x{os.cpu_count()} logical cores']
    for device in tf.config.list_physical_devices('GPU'):
        details = tf.config.experimental.get_device_details(device)
        names.append(f'{device.name}: {details.get("device_name", "unknown GPU")}')
    return names


def versions():
    """Software versions; on GPU nodes also CUDA and cuDNN (as TensorFlow was built with
    them) and the NVIDIA driver (from nvidia-smi, when it answers)."""
    out = {'payload': PAYLOAD_VERSION, 'suite': provenance.suite_version(),
           'tensorflow': tf.__version__,
           'keras': keras.__version__, 'numpy': np.__version__,
           'python': platform.python_version(), 'platform': sys.platform}
    if tf.config.list_physical_devices('GPU'):
        build = tf.sysconfig.get_build_info()
        out.update(cuda=build.get('cuda_version'), cudnn=build.get('cudnn_version'),
                   rocm=build.get('rocm_version'), gpu_driver=gpu_driver())
    return out


def gpu_driver():
    try:
        proc = subprocess.run(['nvidia-smi', '--query-gpu=driver_version', '--format=csv,noheader'],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = proc.stdout.split()
    return lines[0] if proc.returncode == 0 and lines else None


def process_age_s():
    """Seconds since this process started (from /proc), else None."""
    try:
        with open('/proc/self/stat') as f:
            started_ticks = int(f.read().rsplit(')', 1)[1].split()[19])
        with open('/proc/uptime') as f:
            uptime = float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return round(uptime - started_ticks / os.sysconf('SC_CLK_TCK'), 2)


def check_memory(batches, model, records, memory_model, limit_bytes):
    """Refuse the first image whose training step, batched as ``batches`` says, would need
    more than ``limit_bytes`` to train ``model``."""
    from payload import PayloadError, data
    for record, (batch, height, width) in data.batch_shapes(records, batches):
        need = memory_model.training_bytes(batch, height, width)
        if need > limit_bytes:
            raise PayloadError(
                f'image {record.path!r} ({record.width}x{record.height} px, trained as '
                f'{width}x{height} at batch {batch}) needs about {need / 2**30:.2f} GiB to train '
                f'{model}, over the memory limit of {limit_bytes / 2**30:.2f} GiB; '
                f'lower --pixel-budget or raise --memory-limit-gib')
