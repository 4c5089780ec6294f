"""The change points ``ssb-acceptance`` reports: those of the system's stored history
(judge/changes.py), written into the report directory's changes/, and the lines of those
found in the last nights for the summary."""
from ssb_references.judge import changepoints, changes
from ssb_references.report import change_files

RECENT_NIGHTS = 7


def recent_lines(runs, out_dir, nights=RECENT_NIGHTS):
    """Write the change points of ``runs`` into ``out_dir``; the lines of those found in the
    last ``nights`` days before the newest run."""
    found = changes.find(runs)
    change_files.write(out_dir, found, changes.params_text(
        changepoints.WINDOW, changepoints.MAX_PVALUE, changepoints.MIN_MAGNITUDE))
    newest = max(r.time for r in runs)
    return [changes.line(c) for c in changes.recent(found.changes, nights, newest)]
