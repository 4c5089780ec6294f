"""The benchmark's harness: one payload run as a subprocess, read line by line as it prints
and measured from outside (``/usr/bin/time -v``), the data it runs on, and the table helpers."""
import os
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)          # run as a script from a checkout
from payload import protocol  # noqa: E402

TIME = '/usr/bin/time'
TARGETS = {'input_ratio': 0.95, 'epoch_time_error': 0.02, 'rss_error': 0.05,
           'reference_ratio': 0.95}


class Run:
    """One payload subprocess, its output lines with arrival times, and /usr/bin/time's report."""

    def __init__(self, label, args, workdir, command=(sys.executable, '-m', 'payload')):
        """``command``: what runs the payload, ``args`` after it (a container's ch-run line)."""
        self.label, self.args = label, list(map(str, args))
        self.epochs, self.summary, self.arrivals = [], None, []
        self.time_report, self.stderr = {}, ''
        time_file = os.path.join(workdir, f'time-{len(os.listdir(workdir))}.txt')
        cmd = [*command, *self.args]
        if os.access(TIME, os.X_OK):
            cmd = [TIME, '-v', '-o', time_file] + cmd
        env = dict(os.environ, PYTHONUNBUFFERED='1')
        start = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, bufsize=1, env=env)
        err = []
        reader = threading.Thread(target=lambda: err.append(proc.stderr.read()))
        reader.start()
        for line in proc.stdout:
            now = time.monotonic()
            parsed = protocol.parse(line)
            if parsed and parsed[0] == protocol.EPOCH_TAG:
                self.epochs.append(parsed[1])
                self.arrivals.append(now)
            elif parsed:
                self.summary = parsed[1]
        proc.wait()
        reader.join()
        self.wall_s = time.monotonic() - start
        self.stderr = ''.join(err)
        if proc.returncode != 0 or self.summary is None:
            tail = '\n'.join(self.stderr.splitlines()[-5:])
            raise SystemExit(f'{label}: payload failed (exit {proc.returncode}):\n{tail}')
        if os.path.exists(time_file):
            with open(time_file) as f:
                for line in f:
                    key, sep, value = line.strip().rpartition(': ')
                    if sep:
                        self.time_report[key] = value

    # Fidelity --------------------------------------------------------------
    def reported_epochs_s(self):
        return sum(e['seconds'] for e in self.epochs[1:])

    def external_epochs_s(self):
        return self.arrivals[-1] - self.arrivals[0]

    def epoch_time_error(self):
        return self.reported_epochs_s() / self.external_epochs_s() - 1

    def time_rss_bytes(self):
        kib = self.time_report.get('Maximum resident set size (kbytes)')
        return int(kib) * 1024 if kib else None

    def rss_error(self):
        external = self.time_rss_bytes()
        return self.summary['host_peak_rss_bytes'] / external - 1 if external else None

    def unaccounted_s(self):
        setup = self.summary.get('setup_s')
        if setup is None:
            return None
        return self.wall_s - setup - sum(e['seconds'] for e in self.epochs)


def pct(x, digits=1):
    return 'n/a' if x is None else f'{100 * x:+.{digits}f}%'


def verdict(ok):
    return 'n/a' if ok is None else ('met' if ok else '**missed**')


def fmt(x, digits=2):
    return 'n/a' if x is None else f'{x:.{digits}f}'


def table(header, rows):
    lines = ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    lines += ['| ' + ' | '.join(map(str, row)) + ' |' for row in rows]
    return '\n'.join(lines)


def load():
    try:
        return ' / '.join(f'{x:.2f}' for x in os.getloadavg())
    except OSError:
        return 'n/a'


def make_data(workdir, args):
    from sizeshape_datasets import hdf5, synthetic
    lrfs = os.path.join(workdir, 'lrfs')
    classes = max(1, min(len(synthetic.MEDIUMS), args.lrfs_images // 2))
    synthetic.generate(lrfs, images_per_class=max(1, args.lrfs_images // classes),
                       val_per_class=0, num_classes=classes, scale=args.lrfs_scale,
                       seed=args.seed)
    hrvs = os.path.join(workdir, 'hrvs')
    synthetic.generate(hrvs, images_per_class=args.hrvs_images_per_class, val_per_class=0,
                       scale=args.hrvs_scale, seed=args.seed)
    lrfs_h5 = os.path.join(workdir, 'lrfs.h5')
    hdf5.pack(lrfs, lrfs_h5)
    return lrfs, lrfs_h5, hrvs
