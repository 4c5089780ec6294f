"""The workload options as the payload's command line: the arguments its parser takes, the
values it parsed, and the command line the tests write for a run."""
import argparse

from ssb_contract.options import OPTIONS


def _argparse_type(parse):
    """``parse`` for argparse: its ValueError becomes the option's error, in its words."""
    def convert(text):
        try:
            return parse(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    convert.__name__ = parse.__name__
    return convert


def _dest(flag):
    return flag.lstrip('-').replace('-', '_')


def add_arguments(parser, names=None):
    """Add the options (those in ``names``; None: all) to an argparse parser, each under its
    name. Options that share a flag (the batch sizes) are one argument, under the flag's
    name (``batch_size``), whose default is the run's variant's: ``values``."""
    chosen = [o for o in OPTIONS if names is None or o.name in names]
    for flag in dict.fromkeys(o.flag for o in chosen):
        same = [o for o in chosen if o.flag == flag]
        o = same[0]
        if len(same) > 1:
            defaults = ', '.join(f'{s.default} for {s.variant}' for s in same)
            parser.add_argument(flag, dest=_dest(flag), type=o.type,
                                help=f'{o.help}; default: {defaults}')
        elif o.type is bool:
            parser.add_argument(flag, dest=o.name, help=o.help,
                                action='store_false' if o.default else 'store_true')
        else:
            parse = o.type if o.type in (int, float, str) else _argparse_type(o.type)
            parser.add_argument(flag, dest=o.name, type=parse, help=o.help,
                                choices=o.choices or None, required=o.required,
                                default=None if o.required else o.default)


def values(namespace, names=None):
    """{option name: value} of a namespace ``add_arguments`` parsed: every option of its
    variant's runs (a shared flag's value under the variant's option)."""
    out = {}
    for o in OPTIONS:
        if names is not None and o.name not in names or o.variant not in (None,
                                                                             namespace.variant):
            continue
        shared = [s for s in OPTIONS if s.flag == o.flag and (names is None or s.name in names)]
        if len(shared) > 1:
            given = getattr(namespace, _dest(o.flag))
            out[o.name] = o.default if given is None else given
        elif hasattr(namespace, o.name):
            out[o.name] = getattr(namespace, o.name)
    return out


def command_line(values):
    """The payload's options that give it ``values`` ({option name: value}); a bool at its
    default, None and '' are left out (the payload's default, or nothing)."""
    out = []
    for o in OPTIONS:
        value = values.get(o.name)
        if o.name not in values or value is None or value == '':
            continue
        if o.type is bool:
            out += [o.flag] if value != o.default else []
        else:
            out += [o.flag, str(value)]
    return out
