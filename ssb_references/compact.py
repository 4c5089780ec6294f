"""Runs that stay small when a perflog holds years of them.

A perflog record is about 130 text fields and 20 performance variables, and almost every field
repeats from one night to the next: read as plain dicts, 500,000 records (661 MB) took 10 GB.
``Packer`` keeps each run's fields as the few that change from record to record plus a dict
shared by every run with the same others, its performance variables as a row of numbers
under a shared list of names and units, and its logged references as a shared dict.
"""
import math
import sys
from array import array
from collections.abc import Mapping


class Fields(Mapping):
    """A run's fields: its own (the ones that vary from run to run) over a shared dict."""
    __slots__ = ('own', 'shared')

    def __init__(self, own, shared):
        self.own, self.shared = own, shared

    def __getitem__(self, name):
        if name in self.own:
            return self.own[name]
        return self.shared[name]

    def __iter__(self):
        yield from self.own
        yield from (k for k in self.shared if k not in self.own)

    def __len__(self):
        return len(self.own) + sum(k not in self.own for k in self.shared)


class Perf(Mapping):
    """variable -> (value, unit), the values in one array under shared names and units."""
    __slots__ = ('layout', 'values')

    def __init__(self, layout, values):
        self.layout, self.values = layout, values       # layout: ({name: index}, units)

    def __getitem__(self, name):
        at = self.layout[0][name]
        return self.values[at], self.layout[1][at]

    def __iter__(self):
        return iter(self.layout[0])

    def __len__(self):
        return len(self.layout[0])


class Packer:
    """Packs the records of one read, sharing what repeats between them."""

    def __init__(self, normalize):
        self.normalize = normalize
        self.texts, self.shared, self.layouts, self.refs = {}, {}, {}, {}
        self.varying, self.last = set(), {}

    def text(self, name, raw):
        key = (name, raw)
        if key not in self.texts:
            value = self.normalize(raw)
            self.texts[key] = sys.intern(value) if isinstance(value, str) else value
        return self.texts[key]

    def fields(self, pairs, case):
        """Fields from (name, raw text) pairs of one test case (``case``: its name): a field
        is the run's own once it has differed between two runs of one test case."""
        last = self.last.setdefault(case, {})
        for name, raw in pairs:
            if name not in self.varying and last.setdefault(name, raw) != raw:
                self.varying.add(name)
        own, rest = {}, []
        for name, raw in pairs:
            if name in self.varying:
                own[name] = self.text(name, raw)
            else:
                rest.append((name, raw))
        key = tuple(rest)
        if key not in self.shared:
            self.shared[key] = {name: self.text(name, raw) for name, raw in rest}
        return Fields(own, self.shared[key])

    def perf(self, measured):
        """Perf from [(name, value, unit)]."""
        names = tuple(n for n, _, _ in measured)
        units = tuple(u for _, _, u in measured)
        layout = self.layouts.setdefault((names, units),
                                         ({n: i for i, n in enumerate(names)}, units))
        return Perf(layout, array('d', (v for _, v, _ in measured)))

    def logged_refs(self, refs):
        key = tuple((k, tuple('nan' if v is not None and math.isnan(v) else v for v in t))
                    for k, t in refs.items())
        return self.refs.setdefault(key, refs)
