"""The payload's output protocol: one ``SSB-EPOCH {json}`` line per epoch and one
``SSB-SUMMARY {json}`` line at the end (docs/payload.md, "Output contract").

No TensorFlow import: ReFrame's parser (reframe_tests/payload_log.py) and the
benchmark read these names too. Worker 0 writes to stdout; worker N to its own
``ssb-worker-N.log``, because launchers forward the tasks' output in chunks
(Slurm: 1 KiB) that interleave long lines of several workers sharing one stdout.
"""
import json
import os
import sys

EPOCH_TAG = 'SSB-EPOCH'
SUMMARY_TAG = 'SSB-SUMMARY'
WORKER_RECORDS_PREFIX = 'ssb-worker-'


def emit(tag, record, stream=None):
    print(f'{tag} {json.dumps(record, sort_keys=True)}', file=stream or sys.stdout, flush=True)


def parse(line):
    """(tag, record) of one output line, or None for any other line: the one parser of
    the payload's output (ReFrame's sanity and performance functions, the benchmark)."""
    tag, _, body = line.partition(' ')
    if tag not in (EPOCH_TAG, SUMMARY_TAG) or not body.strip().startswith('{'):
        return None
    return tag, json.loads(body)


def read(path, tag):
    """Every record with ``tag`` in the file, in order."""
    with open(path, errors='replace') as f:
        return [parsed[1] for parsed in map(parse, f) if parsed and parsed[0] == tag]


def worker_file(directory, worker):
    """The file worker ``worker`` (> 0) writes its lines to."""
    return os.path.join(directory, f'{WORKER_RECORDS_PREFIX}{worker}.log')


def worker_records(directory, worker):
    """Where this worker's lines go: stdout for worker 0, a file of its own for the others."""
    if worker == 0:
        return sys.stdout
    return open(worker_file(directory, worker), 'w')
