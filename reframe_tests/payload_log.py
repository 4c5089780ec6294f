"""The one place that reads the payload's output (see README.md, "Payload output").

The payload prints ``SSB-EPOCH {json}`` once per epoch and ``SSB-SUMMARY {json}``
once at the end; failures it can name are one ``error: ...`` line on stderr.
"""
import json
import math

import reframe.utility.sanity as sn
from reframe.core.exceptions import SanityError

EPOCH_PATTERN = r'^SSB-EPOCH (\{.*\})\s*$'
SUMMARY_PATTERN = r'^SSB-SUMMARY (\{.*\})\s*$'
ERROR_PATTERN = r'^error: .*$'


@sn.deferrable
def epochs(stdout):
    return list(sn.extractall(EPOCH_PATTERN, stdout, 1, json.loads))


@sn.deferrable
def summary(stdout):
    return sn.extractsingle(SUMMARY_PATTERN, stdout, 1, json.loads)


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
def assert_no_error(stderr):
    """Fail with the program's own ``error: ...`` line as the reason, if it printed one."""
    error = error_line(stderr).evaluate()
    if error is not None:
        raise SanityError(f'payload failed: {error}')
    return True


@sn.deferrable
def assert_training_complete(stdout, stderr, exitcode, expected_epochs, expected_images):
    """Sanity: no error line, exit 0, every epoch finished with a finite loss on every image.

    ``expected_images`` is called only after the payload is known to have succeeded.
    """
    assert_no_error(stderr).evaluate()
    if exitcode != 0:
        raise SanityError(f'payload exited with status {exitcode} without an error line '
                          f'(killed? see {stderr})')
    records = epochs(stdout).evaluate()
    expected_images = expected_images()
    if [r['epoch'] for r in records] != list(range(1, expected_epochs + 1)):
        raise SanityError(f'expected epochs 1..{expected_epochs}, found '
                          f'{[r["epoch"] for r in records]}')
    for r in records:
        if not math.isfinite(r['loss']):
            raise SanityError(f'epoch {r["epoch"]}: loss is {r["loss"]}')
        if r['images'] != expected_images:
            raise SanityError(f'epoch {r["epoch"]}: trained on {r["images"]} images, '
                              f'the dataset has {expected_images}')
    summary(stdout).evaluate()
    return True
