"""The documentation names only options and variables that the code has, and the code has
none that the documentation leaves out: the command-line options of the payload and the
tools, the ReFrame test variables (``-S``) and the performance variables; and the links
between the documents lead somewhere.

Options are read from the markdown's code: a command (in a code block or an inline span)
gives its options to the program it runs (``python -m payload``, ``ssb-references drift``,
``reframe``, ...); an option named on its own (``--stage-dir DIR``) belongs to one of the
programs its document is about (``DOC_PROGRAMS``)."""
import argparse
import ast
import functools
import glob
import importlib
import os
import pkgutil
import re
import subprocess

import pytest
import reframe as rfm

from conftest import REPO
from payload import cli as payload_cli
from payload import contract
from reframe_runs import REFRAME
from reframe_tests import gap
from sizeshape_datasets import __main__ as datasets_cli
from ssb_references import acceptance
from ssb_references import cli as references_cli

DOCS = sorted(glob.glob(os.path.join(REPO, 'docs', '*.md'))) + [
    os.path.join(REPO, 'README.md'), os.path.join(REPO, 'reframe_tests', 'references', 'README.md')]

# The suite's programs, each with its argparse parser.
PARSERS = {'payload': payload_cli.parser, 'ssb-references': references_cli.parser,
           'ssb-acceptance': acceptance.parser, 'sizeshape_datasets': datasets_cli.parser}
BENCHMARKS = ('benchmarks/run.py', 'benchmarks/trust.py', 'benchmarks/fuzz_cli.py')

# The programs whose options a document may name on their own, outside a command.
DOC_PROGRAMS = {
    'README.md': ('reframe', 'ssb-references', 'ssb-acceptance'),
    'acceptance.md': ('ssb-acceptance', 'reframe'),
    'benchmarks.md': ('payload', 'reframe', 'ssb-acceptance') + BENCHMARKS,
    'clusters.md': ('payload', 'reframe'),
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
SLURM_OPTIONS = {'--gpus-per-node', '--mail-type', '--output'}

# A program the docs run: reframe, the tools (also as .venv/bin/ssb-acceptance or
# ExecStart=/.../ssb-acceptance), python -m <package>, python benchmarks/<script>.py.
PROGRAM = re.compile(r'(?:^|(?<=[\s/=]))(?:(?P<name>reframe|ssb-references|ssb-acceptance)'
                     r'|python3? -m (?P<module>payload|ssb_references|sizeshape_datasets)'
                     r'|python3? (?P<script>benchmarks/\w+\.py))(?=\s|$)')
MODULE_PROGRAMS = {'ssb_references': 'ssb-references'}
OPTION = re.compile(r'(?<![\w-])(--?[A-Za-z][\w-]*)')
FENCE = re.compile(r'^```[^\n]*\n(.*?)^```$', re.M | re.S)
SPAN = re.compile(r'(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)', re.S)
# Shell operators end a command (a redirection names no option: '<site>.py' stays whole);
# a comment ends the line.
SEPARATOR = re.compile(r'&&|\|\||[|;]')
COMMENT = re.compile(r'(?:^|\s)#\s.*$')


def option_of(token):
    """``--mode=x`` -> ``--mode``; ``-lC`` (short options run together) -> ``-l``."""
    return token if token.startswith('--') else token[:2]


def read(path):
    with open(path) as f:
        return f.read()


def code_of(text):
    """(commands: the fenced blocks' lines, continuations joined; inline spans; prose)."""
    lines = []
    for block in FENCE.findall(text):
        for line in block.splitlines():
            # A continued line: after a backslash, or indented under an option list.
            if lines and (lines[-1].endswith('\\') or re.match(r'\s+[-\[]', line)):
                lines[-1] = lines[-1].rstrip('\\') + ' ' + line.strip()
            else:
                lines.append(line)
    rest = FENCE.sub('', text)
    spans = [' '.join(m.group(2).split()) for m in SPAN.finditer(rest)]
    return lines, spans, SPAN.sub(' ', rest)


def tables(path):
    """{section heading: [table rows as lists of cells]} of a markdown file."""
    found, section = {}, ''
    for line in FENCE.sub('', read(path)).splitlines():
        if line.startswith('#'):
            section = line.lstrip('#').strip()
        elif line.startswith('|') and not line.startswith('|---'):
            found.setdefault(section, []).append(
                [c.strip() for c in line.strip().strip('|').split('|')])
    return found


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


def doc_name(path):
    return os.path.relpath(path, os.path.join(REPO, 'docs')) if '/docs/' in path else \
        os.path.relpath(path, REPO)


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
    known = set().union(SLURM_OPTIONS, *(options_of(p) for p in programs))
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


# ReFrame test variables (-S, -P).

SET_VARIABLE = re.compile(r'(?<![\w-])-[SP]\s+(?:(\w+)\.)?([a-z_]\w*)=')
QUALIFIED = re.compile(r'^(\w+)\.(\w+)(?:=.*)?$')
PLAIN = re.compile(r'^(\w+)(?:=.*)?$')


@functools.cache
def suite_classes():
    """{name: class} of every ReFrame test and plugin in reframe_tests/."""
    import reframe_tests
    classes = {}
    for info in pkgutil.iter_modules(reframe_tests.__path__):
        module = importlib.import_module(f'reframe_tests.{info.name}')
        for name, obj in vars(module).items():
            if isinstance(obj, type) and obj.__module__ == module.__name__ and \
                    issubclass(obj, (rfm.RegressionTest, rfm.RegressionTestPlugin)):
                classes[name] = obj
    return classes


def own_variables(cls):
    """The variables ``cls`` declares beyond ReFrame's own."""
    return set(cls.var_space) - set(rfm.RegressionTest.var_space)


def variable_mentions(path):
    """[(test class or None, variable)] that ``path`` sets with -S or -P, or names in code
    alone (``epochs``, ``SyntheticMAMe.seed=0``)."""
    text = read(path)
    lines, spans, _ = code_of(text)
    found = SET_VARIABLE.findall(text)
    for code in spans + lines:
        qualified, plain = QUALIFIED.match(code), PLAIN.match(code)
        if qualified and qualified[1] in suite_classes():
            found.append(qualified.groups())
        elif plain:
            found.append(('', plain[1]))
    return [(cls or None, name) for cls, name in found]


def metrics_variable_list():
    """{variable: its default as the docs give it, or None}: the list in docs/metrics.md."""
    text = read(os.path.join(REPO, 'docs', 'metrics.md'))
    (item,) = re.findall(r'^- Variables \(`-S NAME=VALUE`\):(.*?)(?=^- )', text, re.M | re.S)
    said = {}
    for match in re.finditer(r'`(\w+)`(?: \(([^()]*(?:\([^()]*\)[^()]*)*)\))?', item):
        first = re.match(r'`([^`]+)`|(\d[\w.]*)', match[2] or '')
        said[match[1]] = (first[1] or first[2]) if first else None
    return said


def test_every_test_variable_the_docs_name_exists():
    classes = suite_classes()
    every = set().union(*(own_variables(c) for c in classes.values()))
    unknown = []
    for path in DOCS:
        text = read(path)
        for cls, name in SET_VARIABLE.findall(text):
            if name not in every or cls and (cls not in classes or
                                             name not in own_variables(classes[cls])):
                unknown.append(f'{doc_name(path)}: -S {cls + "." if cls else ""}{name}')
        for cls, name in variable_mentions(path):
            if cls and name not in own_variables(classes[cls]):
                unknown.append(f'{doc_name(path)}: {cls}.{name}')
    unknown += [f'metrics.md: {name}' for name in metrics_variable_list() if name not in every]
    assert not unknown, f'test variables the tests do not have: {unknown}'


def test_the_variable_list_gives_the_defaults():
    """docs/metrics.md's list of -S variables: each default it gives is the variable's."""
    from reframe_tests.training import TrainingTest
    said = metrics_variable_list()
    assert {'epochs', 'pixel_budget', 'timing_lock', 'subset'} <= set(said)
    wrong = []
    for name, default in said.items():
        if default is None or name not in TrainingTest.var_space:
            continue
        value = TrainingTest.var_space[name].default_value
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        if shown != default:
            wrong.append(f'{name}: docs {default}, code {shown}')
    assert not wrong, wrong


def test_every_test_variable_is_documented():
    mentioned = {m for path in DOCS for m in variable_mentions(path)}
    missing = [f'{name}.{var}' for name, cls in suite_classes().items()
               for var in sorted(own_variables(cls))
               if (name, var) not in mentioned and (None, var) not in mentioned]
    assert not missing, f'test variables no document names: {missing}'


# Performance variables.

def documented_perf_vars(section):
    """The variables of the metrics.md table under ``section`` (first column, all names)."""
    rows = tables(os.path.join(REPO, 'docs', 'metrics.md'))[section]
    assert rows[0][0] == 'variable', section
    return {n for row in rows[1:] for n in re.findall(r'`(\w+)`', row[0])}


def gap_perf_vars():
    """What SizeShapeGap logs: each ratio, and the interval of each per-epoch ratio."""
    return set(gap.RATIOS) | {f'{n}_{end}' for n in gap.PER_EPOCH for end in ('low', 'high')}


def literal_perf_vars():
    """Performance variables the tests name outside the contract (perf_variables['x'])."""
    names = set()
    for path in glob.glob(os.path.join(REPO, 'reframe_tests', '*.py')):
        for node in ast.walk(ast.parse(read(path))):
            if isinstance(node, ast.Subscript) and \
                    getattr(node.value, 'attr', '') == 'perf_variables' and \
                    isinstance(node.slice, ast.Constant):
                names.add(node.slice.value)
    return names


def same(section, logged):
    documented = documented_perf_vars(section)
    assert documented == logged, (f'metrics.md, "{section}": not logged '
                                  f'{sorted(documented - logged)}, not documented '
                                  f'{sorted(logged - documented)}')


def test_each_table_of_performance_variables_is_its_test():
    names = {v.name for v in contract.perf_vars('TrainingTest')}
    same('What a run measures', names)
    same('What the gap means', gap_perf_vars())
    same('What the gap means', {v.name for v in contract.perf_vars('SizeShapeGap')})
    same('Time to accuracy', {v.name for v in contract.perf_vars('TimeToAccuracy')}
         | set(contract.TTA_TRAINING_VARS))
    # What the tests log outside the contract's loop is the contract's too.
    assert literal_perf_vars() and literal_perf_vars() <= names


def test_the_readme_shows_performance_variables_the_tests_log():
    shown = re.findall(r'^P: (\w+):', read(os.path.join(REPO, 'README.md')), re.M)
    assert shown and set(shown) <= set(contract.BY_NAME)


# Links between the documents.

def anchors(path):
    """The anchors GitHub gives the headings of ``path``."""
    text = FENCE.sub('', read(path))
    return {re.sub(r'[^\w\- ]', '', h.strip().lower()).replace(' ', '-')
            for h in re.findall(r'^#+ (.*)$', text, re.M)}


@pytest.mark.parametrize('path', DOCS, ids=doc_name)
def test_every_link_between_documents_resolves(path):
    broken = []
    for target, anchor in re.findall(r'\]\(([^)#\s]*)(?:#([^)\s]+))?\)', FENCE.sub('', read(path))):
        if target.startswith(('http://', 'https://')):
            continue
        linked = os.path.normpath(os.path.join(os.path.dirname(path), target)) if target else path
        if not os.path.exists(linked) or anchor and anchor not in anchors(linked):
            broken.append(f'{target}#{anchor}' if anchor else target)
    assert not broken, f'{doc_name(path)} links to what is not there: {broken}'
