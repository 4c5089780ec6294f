"""ReFrame's sanity and performance reading of the payload's output (docs/payload.md,
"Output contract"); the lines are parsed by payload/protocol.py.

The payload prints ``SSB-EPOCH {json}`` once per epoch and ``SSB-SUMMARY {json}``
once at the end; failures it can name are one ``error: ...`` line on stderr.
In multi-worker runs worker 0 prints to stdout and worker N to ``ssb-worker-N.log``
in the job's working directory.
"""
import glob
import math
import os

import reframe.utility.sanity as sn
from reframe.core.exceptions import SanityError

from payload import protocol

ERROR_PATTERN = r'^error: .*$'


def record_files(stdout):
    """stdout (worker 0) and the ssb-worker-<index>.log files of the other workers beside it."""
    return [stdout] + sorted(glob.glob(protocol.worker_file(os.path.dirname(stdout), '*')))


def extract_records(tag, stdout):
    return [r for path in record_files(stdout) for r in protocol.read(path, tag)]


@sn.deferrable
def epochs(stdout):
    return extract_records(protocol.EPOCH_TAG, stdout)


@sn.deferrable
def summaries(stdout):
    """Every worker's summary, by worker index."""
    return {s['worker']: s for s in extract_records(protocol.SUMMARY_TAG, stdout)}


@sn.deferrable
def summary(stdout):
    """Worker 0's summary: epoch records and summaries hold global images and pixels."""
    found = summaries(stdout).evaluate()
    if 0 not in found:
        raise SanityError(f'no SSB-SUMMARY line of worker 0 in {stdout}')
    return found[0]


@sn.deferrable
def summary_value(stdout, key, scale=1.0):
    value = summary(stdout).evaluate()[key]
    if value is None:
        raise SanityError(f'the payload reported no {key!r}')
    return value * scale


@sn.deferrable
def error_line(stderr):
    """The payload's own ``error: ...`` line, or None."""
    lines = list(sn.extractall(ERROR_PATTERN, stderr))
    return lines[-1] if lines else None


@sn.deferrable
def last_line(path):
    with open(path, errors='replace') as f:
        lines = [line.strip() for line in f if line.strip()]
    return lines[-1] if lines else '(empty)'


# srun's line for a task that a signal ended ("srun: error: node2: task 1: Killed"); tasks
# that exited with a status of their own said why in their error line.
SRUN_TASK_SIGNALLED = r'^srun: error: (\S+): tasks? ([0-9,-]+): (?!Exited with exit code)(.+)$'


@sn.deferrable
def signalled_tasks(stderr):
    """'task 1 on node2: Killed' for each task the launcher saw a signal end."""
    return [f'task {tasks} on {node}: {what.strip()}'
            for node, tasks, what in sn.extractall(SRUN_TASK_SIGNALLED, stderr, (1, 2, 3))]


@sn.deferrable
def assert_no_error(stderr):
    """Fail with the program's own ``error: ...`` line as the reason, if it printed one,
    and the tasks that a signal ended, where the launcher named them."""
    error = error_line(stderr).evaluate()
    if error is not None:
        signalled = signalled_tasks(stderr).evaluate()
        raise SanityError(f'payload failed: {error}' +
                          (f' (srun: {"; ".join(signalled)})' if signalled else ''))
    return True


@sn.deferrable
def assert_training_complete(stdout, stderr, exitcode, expected_epochs, expected_images,
                             workers=1, stops_at_target=False, nodes=None):
    """Sanity: no error line, exit 0, every worker finished every epoch with the same
    number of steps and a finite loss, on every image of the dataset; with ``nodes``, the
    workers reported that many host names of their own.

    ``expected_images`` is called only after the payload is known to have succeeded.
    ``stops_at_target``: a time-to-accuracy run, which ends at the epoch that reached
    its target (at most ``expected_epochs``, and never before the second).
    """
    assert_no_error(stderr).evaluate()
    if exitcode != 0:
        signalled = signalled_tasks(stderr).evaluate()
        raise SanityError(f'payload exited with status {exitcode} without an error line; ' +
                          (f'srun: {"; ".join(signalled)}' if signalled else
                           f'last line of {stderr}: {last_line(stderr).evaluate()}'))
    records = epochs(stdout).evaluate()
    finals = summaries(stdout).evaluate()
    if sorted(finals) != list(range(workers)):
        raise SanityError(f'expected summaries of workers 0..{workers - 1}, found {sorted(finals)}')
    hosts = {worker: final.get('host') for worker, final in sorted(finals.items())}
    if not all(hosts.values()):
        raise SanityError(f'workers {[w for w, h in hosts.items() if not h]} reported no host name')
    if nodes is not None and len(set(hosts.values())) != nodes:
        raise SanityError(f'the job ran on {nodes} node(s), but its workers reported '
                          f'{len(set(hosts.values()))} host name(s): '
                          + ', '.join(f'worker {w} on {h}' for w, h in hosts.items()))
    expected_images = expected_images()
    if stops_at_target:
        if not finals[0].get('target_reached'):
            raise SanityError('the run reports no time to accuracy (no target_reached)')
        if not 2 <= finals[0]['epochs'] <= expected_epochs:
            raise SanityError(f'the run stopped after {finals[0]["epochs"]} epochs; expected '
                              f'2..{expected_epochs}')
        expected_epochs = finals[0]['epochs']
    for worker, final in finals.items():
        if final['dataset_images'] != expected_images:
            raise SanityError(f'the dataset has {final["dataset_images"]} images, '
                              f'expected {expected_images}')
        mine = [r for r in records if r.get('worker', 0) == worker]
        if [r['epoch'] for r in mine] != list(range(1, expected_epochs + 1)):
            raise SanityError(f'worker {worker}: expected epochs 1..{expected_epochs}, '
                              f'found {[r["epoch"] for r in mine]}')
        for r in mine:
            if not math.isfinite(r['loss']):
                raise SanityError(f'epoch {r["epoch"]}: loss is {r["loss"]}')
            trained = expected_images - final['images_left_out']
            if r['images'] != trained:
                raise SanityError(f'epoch {r["epoch"]}: trained on {r["images"]} images, '
                                  f'expected {trained}')
            if r['steps'] != mine[0]['steps'] or r['steps'] != finals[0]['steps_per_epoch']:
                raise SanityError(f'worker {worker}, epoch {r["epoch"]}: {r["steps"]} steps, '
                                  f'worker 0 took {finals[0]["steps_per_epoch"]}')
    return True
