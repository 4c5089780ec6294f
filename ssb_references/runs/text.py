"""Plain-text tables and number formatting shared by the commands."""
import math


def num(x, digits=4):
    if x is None:
        return '-'
    if isinstance(x, float) and math.isinf(x):
        return '-'
    return f'{x:.{digits}g}'


def table(headers, rows):
    """A left-aligned text table with a rule under the header."""
    rows = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    lines = ['  '.join(h.ljust(w) for h, w in zip(headers, widths)).rstrip(),
             '  '.join('-' * w for w in widths)]
    lines += ['  '.join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return '\n'.join(lines)


def markdown(headers, rows):
    out = ['| ' + ' | '.join(headers) + ' |', '|' + '|'.join('---' for _ in headers) + '|']
    out += ['| ' + ' | '.join(str(c) for c in r) + ' |' for r in rows]
    return '\n'.join(out)
