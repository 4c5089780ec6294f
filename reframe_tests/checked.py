"""Refuse test variables the payload would not take, before a job script is written.

``-S`` values are typed or pasted by people: a typo must not run zero tests and pass, a
number out of range must not train on something else, and no value may reach the shell
as anything but one argument (environment.py quotes every argument as well). The workload
options are checked as the payload checks them (ssb_contract/checks.py); a refused value
fails the test at set-up, naming what is allowed (docs/hostile-input.md).
"""
import math
import os
import re

import reframe.core.runtime as rt
import reframe.utility.typecheck as typ
from reframe.core.exceptions import ReframeError
from reframe.core.pipeline import RegressionTest

from ssb_common.reframe_private import variable_names
from ssb_contract import checks
from ssb_contract.options import MODELS, OPTIONS, SMOKE_MODEL

from . import site_keys

# Whole numbers of the suite's own variables (the workload options' are in their table):
# the smallest each may be.
MINIMUM = {'images_per_class': 1, 'val_per_class': 0}
# Numbers that may also be None: finite, above the first bound and at most the second.
ABOVE = {'memory_limit_gib': (0, None), 'scale': (0, None), 'max_mpx': (0, None)}
# Numbers strictly between two bounds.
BETWEEN = {'confidence': (0, 1)}


class VariableError(ReframeError):
    """A test variable the payload would not take; fails the test at set-up."""


class Refused(str):
    """A ``-S`` (or ``-P``) value kept until set-up refuses it, saying why: ReFrame turns a
    failed conversion at load time into a traceback, and would let the test overwrite it."""

    def __new__(cls, text, reason):
        obj = super().__new__(cls, text)
        obj.reason = reason
        return obj

    def __getnewargs__(self):          # ReFrame copies variables' values
        return str(self), self.reason


class Invalid(Refused):
    """A value that is not of its variable's type (ReFrame's plain ``bool`` takes any text,
    'false' too, as True); ``reason``: what it should be."""

    def message(self, name):
        return f'-S {name}={str(self)!r} is not {self.reason}'


class SetByHand(Refused):
    """A value given to a variable the test fills in (an output); ``reason``: what sets it."""

    def message(self, name):
        return f'-S {name}={str(self)!r}: the test fills {name} in; {self.reason}'


class _Checked(typ.ConvertibleType):
    def __instancecheck__(cls, inst):
        return isinstance(inst, Refused) or (
            isinstance(inst, cls._type) and (cls._type is bool or not isinstance(inst, bool)))


class Int(metaclass=_Checked):
    """An int test variable that ``-S`` sets from its decimal text."""
    _type = int

    @classmethod
    def __rfm_cast_str__(cls, text):
        try:
            return int(text)
        except ValueError:
            return Invalid(text, 'a whole number')


class Float(metaclass=_Checked):
    _type = float

    @classmethod
    def __rfm_cast_str__(cls, text):
        try:
            return float(text)
        except ValueError:
            return Invalid(text, 'a number')


class Bool(metaclass=_Checked):
    """As ReFrame's typ.Bool (true/yes/y/1, false/no/n/0), refused at set-up otherwise."""
    _type = bool

    @classmethod
    def __rfm_cast_str__(cls, text):
        try:
            return typ.Bool(text)
        except TypeError:
            return Invalid(text, 'true or false')


class _Output(_Checked):
    def __rfm_cast_str__(cls, text):   # ReFrame's -S and -P give text: never an output's
        return SetByHand(text, cls.instead)


def output(kind, instead):
    """The type of a test variable the test fills in from its run (``kind`` values): logged in
    the perflog like every variable, never set by hand. ``instead`` says what sets it:
    'set lrfs_batch_size or hrvs_batch_size instead', 'it comes from ...'."""
    return _Output(f'{kind.__name__} output', (), {'_type': kind, 'instead': instead})


def _choice(name, value, choices):
    if value not in choices:
        yield f'-S {name}={value!r} is not one of {", ".join(choices)}'


def _number(name, value):
    if name in MINIMUM and value < MINIMUM[name]:
        yield f'-S {name}={value} must be at least {MINIMUM[name]}'
    if name in ABOVE:
        low, high = ABOVE[name]
        if not (math.isfinite(value) and value > low and (high is None or value <= high)):
            yield (f'-S {name}={value} must be a finite number above {low}'
                   + (f' and at most {high}' if high is not None else ''))
    if name in BETWEEN and not BETWEEN[name][0] < value < BETWEEN[name][1]:
        yield f'-S {name}={value} must be between {BETWEEN[name][0]} and {BETWEEN[name][1]}'


def perflog_separators():
    """What the file perflogs of this run separate their fields with (site_configs/common.py
    takes ReFrame's builtin handler: '|'): a value holding one would shift every later
    column."""
    handlers = rt.runtime().get_option('logging/0/handlers_perflog') or []
    found = (re.search(r'\)s(.)%\(', h.get('format', '')) for h in handlers
             if h.get('type') == 'filelog')
    return sorted({m.group(1) for m in found if m})


def _text(name, value):
    bad_characters = [(sep, 'separates the fields of the perflog') for sep in perflog_separators()]
    for bad, why in (*bad_characters, ('\n', 'ends a perflog record'),
                     ('\0', 'cannot be in an argument')):
        if bad in value:
            yield f'-S {name}={value!r}: {bad!r} {why}; choose a value without it'


def _setting(option, value):
    return f'-S {option.name}={value!r}' if isinstance(value, str) else f'-S {option.name}={value}'


# The tests name a workload option by its -S setting: '-S hrvs_batch_size=8'.
NAMING = checks.Naming(label=lambda option: f'-S {option.name}', setting=_setting)
WORKLOAD_OPTIONS = {o.name for o in OPTIONS if not o.parameter}


def problems(test):
    """What the payload would refuse in the variables of ``test``, one message each."""
    workload = {}
    for name in sorted(variable_names(type(test)) - variable_names(RegressionTest)):
        value = getattr(test, name)
        if isinstance(value, Refused):
            yield value.message(name)
            continue
        if name in WORKLOAD_OPTIONS:
            workload[name] = value
        elif name == 'models':
            for model in value or ['']:
                yield from _choice(name, model, MODELS)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            yield from _number(name, value)
        if isinstance(value, str):
            yield from _text(name, value)
    # The combinations of the variant the test's results are of (the gap: both).
    variant = test.workload_variant() if hasattr(test, 'workload_variant') else None
    yield from checks.problems(workload, NAMING, variant)
    if hasattr(test, 'subdir') and (os.sep in test.subdir or test.subdir in ('', '.', '..')):
        # The fixture makes its data in <stage dir>/<subdir>, and nowhere else.
        yield f'-S subdir={test.subdir!r} must be one plain name, not a path'
    # The site's paths go into the perflog too.
    extras = test.current_partition.extras if test.current_partition else {}
    for key in (site_keys.MAME_ROOT, site_keys.LOCAL_SCRATCH, site_keys.CONTAINER_IMAGE):
        for message in _text(key, str(extras.get(key, ''))):
            yield message.replace('-S ', "the partition's extras ", 1)


def check(test):
    """At set-up: fail the test, naming every refused variable."""
    found = list(problems(test))
    if found:
        raise VariableError('; '.join(found))
def keep_for_refusal(test):
    """At init: a ``models`` list with an unknown name would skip every test and pass; keep
    the smoke model's single-scale test alive until set-up, where ``check`` refuses it."""
    unknown = [m for m in test.models if m not in MODELS] or not test.models
    if unknown and test.model == SMOKE_MODEL and test.scale == 'single':
        test.models = list(test.models) + [test.model]
