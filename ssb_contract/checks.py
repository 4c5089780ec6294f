"""What a workload option may be, checked once for the payload (its command line) and for the
tests (their ``-S`` values at set-up), each naming the option its own way: the bounds and
choices of the table (options.py), the values its parser refuses, and the combinations the
payload cannot train."""
import math
from dataclasses import dataclass
from typing import Callable

from ssb_contract.options import option


@dataclass(frozen=True)
class Naming:
    """How one side names an option in its messages: ``label(option)`` ('--epochs',
    '-S epochs') and ``setting(option, value)`` ('--batch-size 8', '-S hrvs_batch_size=8')."""
    label: Callable
    setting: Callable


def _bounds(o, value, said):
    if o.minimum is not None and value < o.minimum:
        yield f'{said} must be at least {o.minimum}' + (f': {o.why}' if o.why else '')
    if o.above is not None or o.maximum is not None:
        low, high = o.above, o.maximum
        if not (math.isfinite(value) and (low is None or value > low)
                and (high is None or value <= high)):
            yield (f'{said} must be a finite number' + (f' above {low}' if low is not None else '')
                   + (f' and at most {high}' if high is not None else ''))


def _one(o, value, naming):
    said = naming.setting(o, value)
    if o.choices and value not in o.choices:
        yield f'{said} is not one of {", ".join(o.choices)}'
    elif o.type in (int, float) and not isinstance(value, bool):
        yield from _bounds(o, value, said)
    elif o.type not in (bool, str, int, float):
        try:                                     # a parser of text: what it refuses
            o.type(value)
        except ValueError as err:
            yield f'{naming.label(o)}: {err}'


def _combinations(values, naming, variant):
    def say(name):
        return naming.setting(option(name), values[name])

    if {'crop_size', 'image_size'} <= set(values) and values['crop_size'] > values['image_size']:
        yield f'{say("crop_size")} must be at most {say("image_size")}'
    # A run of HR&VS (or the gap of both) that would not train at the batch it records.
    if variant != 'lrfs' and {'hrvs_batching', 'hrvs_batch_size'} <= set(values) and \
            values['hrvs_batching'] == 'single' and values['hrvs_batch_size'] != 1:
        yield (f'{say("hrvs_batching")} trains at batch 1; use padded or bucketed for '
               f'{say("hrvs_batch_size")}')


def problems(values, naming, variant=None):
    """What is wrong with ``values`` ({option name: value}; None: not set), one message each;
    the combinations of ``variant``'s runs (None: of both, the gap)."""
    for name, value in values.items():
        if value is not None:
            yield from _one(option(name), value, naming)
    yield from _combinations({k: v for k, v in values.items() if v is not None}, naming,
                             variant)
