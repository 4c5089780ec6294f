"""Old references next to the proposed ones."""
from ssb_references.reffile import reffile
from ssb_references.runs.run import key_text
from ssb_references.runs.text import num, table


def fmt(entry):
    if entry is None:
        return '-'
    value, lower, upper, unit = reffile.entry_tuple(entry)
    lo, hi = reffile.band(value, lower, upper)
    return f'{num(value)} {unit or ""} [{num(lo)}, {num(hi)}]'.replace('  ', ' ')


def rows(old, proposals, replace=False):
    """[key, variable, old, new, change, runs] for every entry of either side."""
    old_entries = old.entries if old is not None else {}
    out = []
    for key in sorted(set(old_entries) | set(proposals), key=lambda k: [str(x) for x in k]):
        kp = proposals.get(key)
        names = list(old_entries.get(key) or {})
        if kp is not None:
            names += [n for n in kp.variables if n not in names]
        for name in names:
            before = (old_entries.get(key) or {}).get(name)
            p = kp.variables.get(name) if kp is not None else None
            after = p.as_list() if p is not None else None
            if kp is None:
                status = 'removed' if replace else 'kept'
                after = None if replace else before
            elif after is None:
                status = 'removed'
            elif before is None:
                status = 'new'
            elif list(before) == after:
                status = 'same'
            else:
                status = 'changed'
            change = ''
            if before is not None and after is not None:
                b = reffile.entry_tuple(before)[0]
                change = f'{(after[0] - b) / abs(b) * 100:+.1f}%' if b else ''
            runs = ''
            if p is not None:
                runs = f'{len(p.runs)}: {num(min(p.runs))}..{num(max(p.runs))}'
            out.append([key_text(key), name, fmt(before), fmt(after), change, status, runs])
    return out


def render(old, proposals, replace=False):
    return table(['key', 'variable', 'old [band]', 'new [band]', 'change', 'status',
                  'runs: min..max'], rows(old, proposals, replace))
