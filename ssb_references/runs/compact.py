"""Runs that stay small when a perflog holds years of them.

A perflog record is about 130 text fields and 20 performance variables, and almost every field
repeats from one night to the next: read as plain dicts, 500,000 records (661 MB) took 10 GB.
``Packer`` keeps each run's fields as the few that change from record to record plus a dict
shared by every run with the same others, its performance variables as a row of numbers
under a shared list of names and units, and its logged references as a shared dict.
"""
import sys
from collections.abc import Mapping
from operator import itemgetter


_ABSENT = object()


class Fields(Mapping):
    """A run's fields: its own (the ones that vary from run to run, kept as read and made
    into values when asked for: most never are) over a shared dict."""
    __slots__ = ('own', 'shared', 'value_of')

    def __init__(self, own, shared, value_of):
        self.own, self.shared, self.value_of = own, shared, value_of

    def __getitem__(self, name):
        if name in self.own:
            return self.value_of(self.own[name])
        return self.shared[name]

    def get(self, name, default=None):          # Mapping's own is 3 times slower
        text = self.own.get(name, _ABSENT)
        if text is not _ABSENT:
            return self.value_of(text)
        return self.shared.get(name, default)

    def __contains__(self, name):
        return name in self.own or name in self.shared

    def __iter__(self):
        yield from self.own
        yield from (k for k in self.shared if k not in self.own)

    def __len__(self):
        return len(self.own) + sum(k not in self.own for k in self.shared)


class Perf(Mapping):
    """variable -> (value, unit), the values in one array under shared names and units."""
    # 'row', not 'values': an attribute of that name would hide Mapping.values().
    __slots__ = ('layout', 'row')

    def __init__(self, layout, row):
        self.layout, self.row = layout, row       # layout: ({name: index}, units)

    def __getitem__(self, name):
        at = self.layout[0][name]
        return self.row[at], self.layout[1][at]

    def __contains__(self, name):
        return name in self.layout[0]

    def __iter__(self):
        return iter(self.layout[0])

    def __len__(self):
        return len(self.layout[0])

    def __eq__(self, other):
        if isinstance(other, Perf) and other.layout is self.layout:   # one read: one layout
            return self.row == other.row
        return Mapping.__eq__(self, other)

    __hash__ = None

    def numbers(self):
        """The values alone, in the layout's order."""
        return self.row


class Packer:
    """Packs the runs of one read, sharing what repeats between them."""

    def __init__(self, normalize):
        self.normalize = normalize
        self.shared, self.layouts, self.refs = {}, {}, {}
        self.varying, self.last, self.splits = set(), {}, {}

    def fields(self, names, values, case):
        """Fields from the texts ``values`` of the fields ``names`` of one run of a test case
        (``case``: its name): a field is the run's own once it has differed between two
        runs of one test case, else in a dict shared by every run with the same texts."""
        split = self.splits.get(names)
        if split is None:
            own = [i for i, n in enumerate(names) if n in self.varying]
            rest = [i for i, n in enumerate(names) if n not in self.varying]
            split = self.splits[names] = (own, rest, _getter(rest))
        own, rest, get_rest = split
        shared_texts = get_rest(values)
        last = self.last.setdefault((names, case), shared_texts)
        if last != shared_texts:             # a field of this test case varies: its own now
            self.varying |= {names[i] for i, a, b in zip(rest, last, shared_texts) if a != b}
            self.splits.clear()
            self.last.clear()                # texts of the old split: compare afresh
            return self.fields(names, values, case)
        key = (names, shared_texts)
        shared = self.shared.get(key)
        if shared is None:
            shared = self.shared[key] = {sys.intern(names[i]): _interned(self.normalize(
                values[i])) for i in rest}
        return Fields({names[i]: values[i] for i in own}, shared, self.normalize)

    def perf(self, names, values, units):
        """Perf of the variables ``names`` with these values (an ``array('d')``) and units."""
        layout = self.layouts.get((names, units))
        if layout is None:
            layout = self.layouts[(names, units)] = ({n: i for i, n in enumerate(names)},
                                                     units)
        return Perf(layout, values)

    def logged_refs(self, key, make):
        """The logged references of texts ``key``, ``make()`` the first time."""
        refs = self.refs.get(key)
        if refs is None:
            refs = self.refs[key] = make()
        return refs


def _getter(indices):
    """values -> the tuple of values at ``indices`` (operator.itemgetter, always a tuple)."""
    if not indices:
        return lambda values: ()
    if len(indices) == 1:
        return lambda values: (values[indices[0]],)
    return itemgetter(*indices)


def _interned(value):
    return sys.intern(value) if isinstance(value, str) else value
