"""The dashboard of some runs: their series, judged as drift judges them, drawn into one page
(``ssb-references dashboard`` and ssb-acceptance's reports call ``write``)."""
from ssb_references.judge import changes, drift, stats
from ssb_references.reffile import reffile

from . import page, series


def change_points(runs):
    """The change points of every series of ``runs``, system by system, as ``ssb-references
    changes`` finds them (judge/changes.py), as series.ChangePoint records."""
    out = []
    for system in sorted({r.system for r in runs}):
        found = changes.find([r for r in runs if r.system == system])
        out += [series.ChangePoint(c.test, tuple(c.key), c.variable, c.run.time, c.session,
                                   c.point.mean_before, c.point.mean_after, c.point.change,
                                   c.point.pvalue) for c in found.changes]
    return out


def references_of(ref_dir):
    """refs_of(system, test) for series.build: the system's reference file, read once."""
    cache = {}

    def refs_of(system, test):
        if (system, test) not in cache:
            cache[(system, test)] = reffile.load(reffile.path_for(ref_dir, system), test)
        return cache[(system, test)]
    return refs_of


def write(runs, ref_dir, out, *, source, confidence=stats.DEFAULT_CONFIDENCE,
          history=drift.DEFAULT_HISTORY, last_n=5):
    """Build the page of ``runs`` and write ``out/index.html``; (its path, the series)."""
    all_series = series.build(runs, references_of(ref_dir), confidence, history,
                              change_points(runs))
    html = page.render(all_series, runs, sources=source, confidence=confidence,
                       history=history, last_n=last_n)
    return page.write(html, out), all_series
