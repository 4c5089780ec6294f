"""The documentation names only command-line options that the payload and the tools have,
and they have none that it leaves out (test_docs_variables.py: the test and performance
variables, and the links).

Options are read from the markdown's code: a command (in a code block or an inline span)
gives its options to the program it runs (``python -m payload``, ``ssb-references drift``,
``reframe``, ...); an option named on its own (``--stage-dir DIR``) belongs to one of the
programs its document is about (``DOC_PROGRAMS``)."""
import argparse
import ast
import functools
import os
import re
import subprocess

import pytest

from conftest import REPO
from docs_text import DOCS, code_of, doc_name, read, tables
from payload import cli as payload_cli
from reframe_runs import REFRAME
from sizeshape_datasets import __main__ as datasets_cli
from ssb_container import cli as container_cli
from ssb_references.acceptance import command as acceptance
from ssb_references.cli import references as references_cli

# The suite's programs, each with its argparse parser.
PARSERS = {'payload': payload_cli.parser, 'ssb-references': references_cli.parser,
           'ssb-acceptance': acceptance.parser, 'sizeshape_datasets': datasets_cli.parser,
           'ssb-container': container_cli.parser}
BENCHMARKS = ('benchmarks/run.py', 'benchmarks/trust.py', 'benchmarks/fuzz_cli.py',
              'benchmarks/changes_proof.py', 'benchmarks/growth.py',
              'benchmarks/concurrent_updates.py', 'benchmarks/dashboard.py',
              'benchmarks/year_history.py', 'benchmarks/container.py')

# The programs whose options a document may name on their own, outside a command.
DOC_PROGRAMS = {
    'README.md': ('reframe', 'ssb-references', 'ssb-acceptance'),
    'acceptance.md': ('ssb-acceptance', 'reframe'),
    'benchmarks.md': ('payload', 'reframe', 'ssb-acceptance') + BENCHMARKS,
    'clusters.md': ('payload', 'reframe', 'ssb-container'),
    'dashboard.md': ('ssb-references', 'ssb-acceptance'),
    'data.md': ('payload', 'sizeshape_datasets', 'reframe'),
    'hostile-input.md': ('payload', 'sizeshape_datasets', 'ssb-references', 'ssb-acceptance',
                         'reframe'),
    'metrics.md': ('payload', 'ssb-references', 'reframe'),
    'payload.md': ('payload',),
    'references.md': ('ssb-references', 'reframe'),
    'reframe_tests/references/README.md': ('ssb-references', 'reframe'),
    'versions.md': ('payload', 'ssb-references', 'reframe'),
}
# Slurm's, where the docs say what a setting turns into (sbatch options).
SLURM_OPTIONS = {'--gpus-per-node', '--mail-type', '--output', '--exclusive', '--mem',
                 '--cpus-per-gpu', '--no-requeue'}
# The container tools', where the docs show another builder or a job script (docker build,
# ch-run).
CONTAINER_OPTIONS = {'--build-arg', '--set-env', '--unset-env', '--bind', '--cd'}

# A program the docs run: reframe, the tools (also as .venv/bin/ssb-acceptance or
# ExecStart=/.../ssb-acceptance), python -m <package>, python benchmarks/<script>.py.
PROGRAM = re.compile(r'(?:^|(?<=[\s/=(]))(?:(?P<name>reframe|ssb-references|ssb-acceptance'
                     r'|ssb-container)'
                     r'|python3? -m (?P<module>payload|ssb_references|sizeshape_datasets)'
                     r'|python3? (?P<script>benchmarks/\w+\.py))(?=\s|$)')
MODULE_PROGRAMS = {'ssb_references': 'ssb-references'}
OPTION = re.compile(r'(?<![\w-])(--?[A-Za-z][\w-]*)')
# Shell operators end a command (a redirection names no option: '<site>.py' stays whole);
# a comment ends the line.
SEPARATOR = re.compile(r'&&|\|\||[|;]')
COMMENT = re.compile(r'(?:^|\s)#\s.*$')


def option_of(token):
    """``--mode=x`` -> ``--mode``; ``-lC`` (short options run together) -> ``-l``."""
    return token if token.startswith('--') else token[:2]


@functools.cache
def doc(path):
    """What ``path`` names: [(program, subcommand, option)] of its commands, and the options
    it names on their own."""
    lines, spans, prose = code_of(read(path))
    commands, alone = [], OPTION.findall(prose)
    for code in [COMMENT.sub('', line) for line in lines] + spans:
        for segment in SEPARATOR.split(code):
            segment = segment.strip()
            found = list(PROGRAM.finditer(segment))
            if not found and segment.startswith('-'):
                alone += OPTION.findall(segment)            # an option named on its own
            for i, match in enumerate(found):
                end = found[i + 1].start() if i + 1 < len(found) else len(segment)
                commands += command(match, segment[match.end():end].split())
    return commands, [o for o in alone if o.startswith('--')]


def command(match, words):
    """[(program, subcommand or None, option)] of one command line."""
    program = (match['name'] or MODULE_PROGRAMS.get(match['module'], match['module'])
               or match['script'])
    if '--' in words and program in ('ssb-acceptance', 'benchmarks/trust.py'):
        at = words.index('--')                  # the rest goes to ReFrame as it is
        return command(PROGRAM.match('reframe'), words[at + 1:]) + \
            command(match, words[:at])
    sub = words[0] if words and words[0] in subcommands(program) else None
    return [(program, sub, option_of(o)) for w in words for o in OPTION.findall(w)]


def parser_options(parser):
    """Every option string of ``parser`` but argparse's own --help and --version."""
    return [a for a in parser._actions if a.option_strings and
            not isinstance(a, (argparse._HelpAction, argparse._VersionAction))]


def subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    return {}


def subcommands(program):
    return subparsers(PARSERS[program]()) if program in PARSERS else {}


@functools.cache
def reframe_options():
    """ReFrame's own options, from its --help."""
    out = subprocess.run([REFRAME, '--help'], capture_output=True, text=True, check=True).stdout
    # An option's line: its option strings and metavars, two spaces, then its help.
    return {option_of(o) for line in out.splitlines() if re.match(r'\s+-', line)
            for o in OPTION.findall(re.split(r'\s{2,}', line.strip())[0])}


def script_options(script):
    """The options a benchmark script adds (literal option strings of add_argument)."""
    tree = ast.parse(read(os.path.join(REPO, script)))
    return {arg.value for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, 'attr', '') == 'add_argument' for arg in node.args
            if isinstance(arg, ast.Constant) and str(arg.value).startswith('-')}


def options_of(program, sub=None):
    """The options ``program`` (its subcommand ``sub``; None: any) takes."""
    if program == 'reframe':
        return reframe_options() | {'-h', '--help'}
    if program in BENCHMARKS:
        return script_options(program) | {'-h', '--help'}
    parser = PARSERS[program]()
    parsers = [parser] + ([subparsers(parser)[sub]] if sub else list(subparsers(parser).values()))
    return {s for p in parsers for a in p._actions for s in a.option_strings}


def test_reading_the_docs():
    """The reader finds what a rename must break: a few commands of each kind, each option
    where it belongs."""
    commands = {c for path in DOCS for c in doc(path)[0]}
    assert ('payload', None, '--pixel-budget') in commands
    assert ('sizeshape_datasets', 'pack', '--subsets') in commands
    assert ('ssb-references', 'drift', '--history') in commands
    assert ('ssb-acceptance', None, '--baseline') in commands
    assert ('reframe', None, '-S') in commands                 # after ssb-acceptance's --
    assert ('reframe', None, '--performance-compare') in commands
    assert ('benchmarks/run.py', None, '--sections') in commands
    alone = doc(os.path.join(REPO, 'docs', 'metrics.md'))[1]
    assert '--tta-aggregate' in alone and '--step' in alone
    assert {'--mode', '-S', '--exec-policy', '--performance-compare', '--repeat'} <= \
        reframe_options()


@pytest.mark.parametrize('path', DOCS, ids=doc_name)
def test_every_option_the_docs_name_exists(path):
    commands, alone = doc(path)
    unknown = [f'{program}{" " + sub if sub else ""} {option}'
               for program, sub, option in commands if option not in options_of(program, sub)]
    programs = DOC_PROGRAMS.get(doc_name(path), ())
    known = set().union(SLURM_OPTIONS, CONTAINER_OPTIONS, *(options_of(p) for p in programs))
    unknown += [f'{option} (none of {", ".join(programs) or "no program"} has it)'
                for option in alone if option not in known]
    assert not unknown, f'{doc_name(path)} names options the code does not have: {unknown}'


def test_every_option_is_documented():
    documented = set()
    for path in DOCS:
        commands, alone = doc(path)
        documented |= set(commands)
        documented |= {(program, None, option) for option in alone
                       for program in DOC_PROGRAMS.get(doc_name(path), ())}
    missing = []
    for program, make in PARSERS.items():
        parser = make()
        for sub, p in [(None, parser)] + list(subparsers(parser).items()):
            for action in parser_options(p):
                if not any((program, s, o) in documented for s in (sub, None)
                           for o in action.option_strings):
                    missing.append(f'{program}{" " + sub if sub else ""} '
                                   f'{"/".join(action.option_strings)}')
    assert not missing, f'options no document names: {missing}'


def test_the_payload_table_gives_the_defaults():
    """docs/payload.md's options: each default it gives as a value is the parser's."""
    rows = tables(os.path.join(REPO, 'docs', 'payload.md'))['The payload']
    assert rows[0][:2] == ['option', 'default']
    actions = {o: a for a in parser_options(payload_cli.parser()) for o in a.option_strings}
    wrong, checked = [], 0
    for row in rows[1:]:
        options = re.findall(r'`(--[\w-]+)`', row[0])
        said = row[1].split(', ')
        if len(said) != len(options):
            continue
        for option, default in zip(options, said):
            action = actions.get(option)
            if action is None:
                continue                    # test_every_option_the_docs_name_exists says so
            value = re.fullmatch(r'`([^`]+)`|([\d.]+)', default)
            if default == 'required':
                ok = action.required
            elif default == 'none':
                ok = action.default is None and not action.required
            elif value and value[2]:
                ok = isinstance(action.default, (int, float)) and \
                    float(value[2]) == action.default
            elif value:
                ok = value[1] == action.default
            else:
                continue                    # said in words: 'off', 'measured', ...
            checked += 1
            if not ok:
                wrong.append(f'{option}: docs {default}, code {action.default!r}')
    assert checked > 10 and not wrong, wrong
