"""One run of the test (a perflog record or a stored test case), and how runs are selected.

Runs are keyed like the reference files: by the partition's full name, the
variant, the model and, when the test has one, the scale.
"""
import datetime
import functools
import re
from dataclasses import dataclass, field

from ssb_contract.options import workload_fields

#: The test a command reads by default: the runs references are first of all for.
TEST_NAME = 'TrainingTest'
#: Reference index: ReFrame's ``$partition``, these test attributes and, when any run has
#: them, the optional ones, with the value a run logged before the attribute existed.
# The tests references are kept for, each with its index attributes after $partition.
TESTS = {'TrainingTest': ['variant', 'model'], 'SizeShapeGap': ['model'],
         'TimeToAccuracy': ['variant', 'model']}
OPTIONAL_INDEX_ATTRS = {'scale': 'single'}


def normalize(value):
    """The text of a logged value, the same for perflog text and results-DB JSON."""
    if value is None or value in ('null', 'None', ''):
        return None
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, str):
        try:                   # numeric text as the number it is: '1.0' and 1.0 alike
            value = float(value) if re.fullmatch(r'-?[0-9.]+(e-?[0-9]+)?', value) else value
        except ValueError:
            pass
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@functools.lru_cache(maxsize=4096)          # index values repeat in every run of a key
def typed(text):
    """A number where the text is one (for YAML keys and values), else the text."""
    if text is None:
        return None
    if re.fullmatch(r'-?\d+', text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


@dataclass(slots=True)
class Run:
    system: str
    partition: str            # full name, 'system:partition', as ReFrame's $partition
    test: str
    fields: dict              # test variables, normalized text
    perf: dict                # variable -> (value, unit)
    time: float               # job completion, Unix seconds
    source: str               # perflog file or results DB
    session: str = ''         # results DB session UUID, if any
    logged_refs: dict = field(default_factory=dict)  # variable -> (ref, lower, upper)

    def get(self, name):
        return self.fields.get(name)

    @property
    def environ(self):
        return self.fields.get('environ')

    @property
    def variant(self):
        return self.fields.get('variant')

    @property
    def tensorflow_version(self):
        return self.fields.get('tensorflow_version')

    @property
    def payload_version(self):
        return self.fields.get('payload_version')

    @property
    def payload_series(self):
        """major.minor of the payload version: runs of one series measure alike."""
        version = self.payload_version
        return '.'.join(version.split('.')[:2]) if version else None

    def get_index(self, attr):
        """An index attribute's value (the default of an optional one the run predates)."""
        value = self.fields.get(attr)
        if value is None:
            value = OPTIONAL_INDEX_ATTRS.get(attr)
        return typed(value)

    def key(self, index_attrs):
        return (self.partition,) + tuple(self.get_index(a) for a in index_attrs)

    def workload(self):
        """The test variables that define the run's work (those it logged: an older payload's
        runs lack the newer ones)."""
        names = workload_fields(self.variant, to_accuracy=self.test == 'TimeToAccuracy')
        return {n: value for n in names if (value := self.fields.get(n)) is not None}

    @property
    def when(self):
        return datetime.datetime.fromtimestamp(self.time, datetime.timezone.utc)


def index_attrs(runs):
    """The reference index attributes for these runs of one test (the optional ones if any
    run has them)."""
    attrs = list(TESTS[runs[0].test if runs else TEST_NAME])
    for a in OPTIONAL_INDEX_ATTRS:
        if any(r.fields.get(a) is not None for r in runs):
            attrs.append(a)
    return attrs


def key_text(key):
    """'generic:default/lrfs/smallcnn': a key as one string (reference file metadata, tables)."""
    return '/'.join(str(k) for k in key)


def meta_key(test, key):
    """A key in the reference file's metadata: TrainingTest's as they are, another test's
    after its name ('SizeShapeGap/generic:default/smallcnn/single')."""
    return key_text(key) if test == TEST_NAME else f'{test}/{key_text(key)}'


def parse_time(text):
    """A UTC datetime from ISO text (a date, or a date and time), as Unix seconds."""
    try:
        when = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f'invalid time {text!r}: expected an ISO date such as '
                         f'2026-01-31 or 2026-01-31T14:00') from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return when.timestamp()


def select(runs, *, system=None, environ=None, since=None, until=None, where=None):
    """Runs of one system (and environment) in a time window, oldest first.

    ``where``: {test variable: value text} the runs must have logged.
    """
    where = where or {}
    chosen = [r for r in runs
              if (system is None or r.system == system)
              and (environ is None or r.environ == environ)
              and (since is None or r.time >= since)
              and (until is None or r.time <= until)
              and all(r.get(k) == v for k, v in where.items())]
    return sorted(chosen, key=lambda r: r.time)


def group(runs, attrs=None):
    """{key: [runs, oldest first]}, keys sorted."""
    attrs = attrs or index_attrs(runs)
    groups = {}
    for r in sorted(runs, key=lambda r: r.time):
        groups.setdefault(r.key(attrs), []).append(r)
    return dict(sorted(groups.items(), key=lambda kv: [str(k) for k in kv[0]]))


def last(groups, n):
    """Only the newest ``n`` runs of each group (all of them if n is None)."""
    if n is None:
        return groups
    return {k: v[-n:] for k, v in groups.items()}


def without_variant(key):
    """(partition, model, ...): a key of ``group`` without its variant."""
    return (key[0],) + key[2:]


def unit_of(runs, name):
    """The unit the runs log ``name`` in ('' where none has it)."""
    return next((r.perf[name][1] for r in runs if name in r.perf), '')


def curve(run, name):
    """A per-epoch field of a run (comma-separated in the perflog), as floats."""
    return [float(x) for x in (run.get(name) or '').split(',') if x]
