"""Names read from data (perflogs copied in from other sites, results databases, reference
files) are names, never paths: a system or partition name is checked against ReFrame's own
rule for them before any path is built from it, and runs under other names are left out."""
import re

from ssb_references.runs import notices

# ReFrame's configuration schema (reframe/schemas/config.json, "alphanum_ext_string"): what
# ReFrame itself takes as a system, partition or environment name.
REFRAME_NAME = re.compile(r'[a-zA-Z_][a-zA-Z0-9_-]*')
RULE = 'a letter or _, then letters, digits, _ and -'


class UnsafeName(ValueError):
    """A name from the data that ReFrame would not take, so no path is built from it."""


def is_reframe_name(name):
    return isinstance(name, str) and REFRAME_NAME.fullmatch(name) is not None


def checked(name, what='system'):
    """``name`` if ReFrame takes it as a ``what`` name, else UnsafeName: for a file name."""
    if not is_reframe_name(name):
        raise UnsafeName(f'{what} name {name!r} is not one ReFrame takes ({RULE}): refusing '
                         f'to build a file name from it')
    return name


def _problem(run):
    system, _, partition = (run.partition or '').partition(':')
    if not is_reframe_name(run.system):
        return f'system name {run.system!r}'
    if system != run.system or not is_reframe_name(partition):
        return f'partition name {run.partition!r}'
    return None


def keep_named(runs):
    """The runs whose system and partition are ReFrame names; one warning per other name."""
    kept, left_out = [], {}
    for run in runs:
        why = _problem(run)
        if why:
            left_out.setdefault(why, run.source)
        else:
            kept.append(run)
    for why, source in left_out.items():
        notices.warn(f'{source}: runs left out: their {why} is not one ReFrame takes ({RULE})')
    return kept
