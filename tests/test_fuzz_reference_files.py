"""Property: a reference file of any shape is read, or refused in one ``error:`` line naming
the file; never a traceback, a hang or a quiet wrong verdict. A real file that ``update``
wrote has one node (anywhere, the root included) replaced by a random YAML shape, and
``diff``, ``drift`` and ``report`` run on it (docs/hostile-input.md)."""
import contextlib
import io

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference_runs import STEADY, record, write_perflog
from ssb_references.cli import references as cli

FAST = settings(max_examples=80, deadline=5000, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

# Numbers that broke something once: an int no float holds, ReFrame's largest, NaN.
ODD_NUMBERS = [10**400, -10**400, 1e308, -1e308, float('nan'), float('inf'), 0, -1, 0.0]
TEXT = st.text(st.characters(blacklist_categories=('Cs',)), max_size=8)
SCALARS = st.one_of(st.none(), st.booleans(), st.sampled_from(ODD_NUMBERS), st.integers(),
                    st.floats(), TEXT, st.sampled_from(['$xfail', 's', 'lrfs', '$index']))
SHAPES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.one_of(TEXT, st.integers()), inner, max_size=4)), max_leaves=10)


@pytest.fixture(scope='module')
def written(tmp_path_factory):
    """(perflog dir, a reference file update wrote, as data)."""
    tmp = tmp_path_factory.mktemp('fuzz-refs')
    recs = [record(s, i) for i, s in enumerate(STEADY)]
    recs += [record(1.4 * s, 3 + i) for i, s in enumerate(STEADY)]       # drifted, later
    write_perflog(tmp / 'perflogs' / 'generic' / 'default' / 'TrainingTest.log', recs)
    status, _ = run(['update', '--perflog-dir', tmp / 'perflogs', '--reference-dir',
                     tmp / 'refs', '--last', '3'])
    assert status == 0
    return tmp / 'perflogs', yaml.safe_load((tmp / 'refs' / 'generic.yaml').read_text())


def run(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main([str(a) for a in args])
    return status, err.getvalue()


# Free text: any value is fine there, and its many leaves would crowd out the structure.
FREE = ('workload', 'rule', 'jobids', 'nodes')


def paths(node, at=()):
    """Every place in the tree where a shape matters: the root, each mapping value and each
    list item, but not inside the free-text parts."""
    yield at
    if at and at[-1] in FREE:
        return
    items = node.items() if isinstance(node, dict) else (
        enumerate(node) if isinstance(node, list) else ())
    for k, sub in items:
        yield from paths(sub, at + (k,))


def replaced(data, at, shape):
    if not at:
        return shape
    copy = yaml.safe_load(yaml.safe_dump(data))
    node = copy
    for k in at[:-1]:
        node = node[k]
    node[at[-1]] = shape
    return copy


@FAST
@given(data=st.data(), shape=SHAPES)
def test_a_reference_file_of_any_shape_is_read_or_refused_in_one_line(written, tmp_path_factory,
                                                                      data, shape):
    perflogs, good = written
    at = data.draw(st.sampled_from(list(paths(good))))
    refs = tmp_path_factory.mktemp('refs')
    (refs / 'generic.yaml').write_text(yaml.safe_dump(replaced(good, at, shape)))
    for command in (['diff'], ['drift'], ['report', '--no-plots', '--out', refs / 'report']):
        status, err = run([*command, '--perflog-dir', perflogs, '--reference-dir', refs])
        assert status in (0, 1, 2), (command, err)
        if status == 2:
            assert err.count('\n') == 1 and 'error:' in err and str(refs) in err, err
