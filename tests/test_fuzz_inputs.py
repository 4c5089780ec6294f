"""Property: no option of the payload or the tools, and no metadata file, gives a traceback or
a run on other data than the data asked for. Few examples with a deadline, to stay fast in
CI; benchmarks/fuzz_cli.py runs the CLIs themselves on many more, by hand."""
import argparse
import contextlib
import csv
import io
import math
import os
import shutil

import pytest
from conftest import make_dataset
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from payload import PayloadError
from payload import cli as payload_cli
from reframe_tests import checked
from sizeshape_datasets import __main__ as datasets_cli
from sizeshape_datasets import hdf5, mame
from ssb_contract.options import MIN_PIXEL_BUDGET
from ssb_references.acceptance import command as acceptance
from ssb_references.cli import references as references_cli

FAST = settings(max_examples=60, deadline=2000, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

# Values people type or paste, and values that broke something once.
NASTY = ['', ' ', '0', '-1', '1', '2', '0.5', '1e400', 'inf', '-inf', 'nan', 'abc', '65k',
         'native', '2**40', '9' * 30, '../x', '/etc/passwd', 'a|b', 'x; touch pwned #',
         '$(id)', '`id`', 'a\nb', '\udcff', 'file:///etc/passwd', 'http://', 'ftp://h/x',
         'http://h:port/', '2999-01-01', '2026-13-45', 'smallcnn', 'resnet5', '--', '-h']


def value():
    return st.one_of(st.sampled_from(NASTY), st.text(max_size=12),
                     st.integers(-10**12, 10**12).map(str),
                     st.floats(allow_nan=True, allow_infinity=True).map(repr))


def options(parser):
    return [a.option_strings[-1] for a in parser._actions
            if a.option_strings and a.option_strings[-1] not in ('--help', '--version')]


def subparser(parser, command):
    return parser._subparsers._group_actions[0].choices[command]


def argv(parser, fixed=()):
    """Options of ``parser`` with values from ``value()``; ``fixed`` goes first."""
    pair = st.tuples(st.sampled_from(options(parser)), value())
    return st.lists(pair, max_size=6).map(
        lambda pairs: [*fixed, *(x for p in pairs for x in p)])


def parses_or_refuses(parse, args, refusals):
    """``parse(args)`` returns, or refuses with one of ``refusals`` (argparse exits 2)."""
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            parse(args)
        except refusals:
            pass
        except SystemExit as err:
            assert err.code in (0, 2), args


def payload_parse(args):
    parsed = payload_cli.parse_args(args)
    # Nothing taken that makes the run silently other than asked: no inf or NaN, and a
    # pixel budget of at least one image.
    for part in (parsed, parsed.batches, parsed.step, parsed.data, parsed.validation):
        for name, got in vars(part).items():
            assert not isinstance(got, float) or math.isfinite(got), (name, got)
    assert parsed.batches.budget is None or parsed.batches.budget >= MIN_PIXEL_BUDGET


PAYLOAD_FIXED = ['--variant', 'hrvs', '--data-dir', 'x']
# Every option with every nasty value: cheap in process, and it misses no option.
EVERY = [(payload_parse, payload_cli.parser(), PAYLOAD_FIXED, PayloadError),
         (acceptance.parser().parse_args, acceptance.parser(), [], ())]
EVERY += [(references_cli.parser().parse_args, subparser(references_cli.parser(), c), [c], ())
          for c in ('propose', 'drift', 'report')]
EVERY += [(datasets_cli.parser().parse_args, subparser(datasets_cli.parser(), c), [c], ())
          for c in ('make', 'pack', 'prepare', 'describe')]


@pytest.mark.parametrize('parse, parser, fixed, refusals', EVERY)
def test_every_option_with_every_nasty_value(parse, parser, fixed, refusals):
    for option in options(parser):
        for text in NASTY:
            parses_or_refuses(parse, [*fixed, option, text], refusals)


@FAST
@given(args=argv(payload_cli.parser(), PAYLOAD_FIXED))
def test_payload_options_parse_or_are_refused(args):
    parses_or_refuses(payload_parse, args, PayloadError)


@FAST
@given(args=argv(acceptance.parser()))
def test_acceptance_options_parse_or_are_refused(args):
    parses_or_refuses(acceptance.parser().parse_args, args, ())


@FAST
@given(command=st.sampled_from(['propose', 'drift', 'report']), data=st.data())
def test_references_options_parse_or_are_refused(command, data):
    args = data.draw(argv(subparser(references_cli.parser(), command)))
    parses_or_refuses(references_cli.parser().parse_args, [command, *args], ())


@FAST
@given(command=st.sampled_from(['make', 'pack', 'prepare', 'describe']), data=st.data())
def test_dataset_options_parse_or_are_refused(command, data):
    args = data.draw(argv(subparser(datasets_cli.parser(), command)))
    parses_or_refuses(datasets_cli.parser().parse_args, [command, *args], ())


@FAST
@given(text=value())
def test_every_reframe_number_converts_or_is_kept_for_refusal(text):
    for kind in (checked.Int, checked.Float, checked.Bool):
        converted = kind.__rfm_cast_str__(text)
        assert isinstance(converted, (checked.Invalid, kind._type))
        assert isinstance(converted, kind)                 # ReFrame's own type check passes


@pytest.fixture(scope='module')
def real_root(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp('fuzz') / 'mame')


def row(names, elsewhere):
    """One metadata row, mostly well formed: an image file that may exist, escape the root
    or be garbage; now and then a garbage medium or subset, or a field too many."""
    field = st.one_of(st.sampled_from(NASTY), st.text(max_size=8))
    escapes = [elsewhere, '../' * 8 + elsewhere, '../data/' + names[0]]
    image = st.one_of(st.sampled_from(names), st.sampled_from(escapes),
                      st.sampled_from(['/etc/hostname', 'sub/0.jpg', 'data', '.', '']), field)
    medium = st.sampled_from(['Oil on canvas'] * 4 + [' Woven fabric ', 'Nothing'])
    subset = st.sampled_from(['train'] * 4 + ['val', 'Train', ''])
    extra = st.sampled_from([[]] * 4 + [['x'], ['', 'y']])
    return st.tuples(image, medium, subset, extra).map(
        lambda r: [r[0], r[1], 'museum', 'id', r[2], '1', '1', '1', '1', *r[3]])


@FAST
@given(data=st.data(), tail=st.sampled_from([b''] * 3 + [b'\xff\xfe', b'"', b'a,b\n', b'\0']))
def test_metadata_files_read_only_images_of_their_root(real_root, tmp_path_factory, data, tail):
    names = [r.image_file for r in mame.read_metadata(real_root)][:5]
    # A real image of another dataset: absolute, and reached by climbing out with '..'.
    elsewhere = os.path.join(real_root, mame.IMAGE_DIR, names[0])
    rows = data.draw(st.lists(row(names, elsewhere), min_size=1, max_size=4))
    root = str(tmp_path_factory.mktemp('case') / 'mame')
    shutil.copytree(real_root, root)
    with open(os.path.join(root, mame.METADATA_FILE), 'w', newline='',
              errors='surrogateescape') as f:
        writer = csv.writer(f)
        writer.writerow(mame.COLUMNS)
        writer.writerows(rows)
    with open(os.path.join(root, mame.METADATA_FILE), 'ab') as f:
        f.write(tail)                                  # not always text, not always UTF-8
    try:
        records, _ = hdf5.read_dataset(root, 'train')
    except mame.DatasetError:
        return
    inside = os.path.join(os.path.realpath(root), mame.IMAGE_DIR) + os.sep
    for record in records:
        assert os.path.realpath(record.path).startswith(inside), record.path


def test_the_fuzzed_parsers_are_the_real_ones():
    # The strategies read the options from the parsers the CLIs use: a new option is fuzzed.
    assert isinstance(payload_cli.parser(), argparse.ArgumentParser)
    assert '--learning-rate' in payload_cli.parser().format_help()
    assert '--webhook' in acceptance.parser().format_help()
