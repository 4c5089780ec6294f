"""Nothing of the perflogs is lost: every field that TrainingTest, SizeShapeGap and
TimeToAccuracy logged in the README's default run before the options table, the outputs and
the payload's settings were reorganised (tests/fixtures/perflog-fields.json, the header lines
of that run) is logged still, under the same name."""
import json
import os

import pytest
from conftest import REPO

FIXTURE = os.path.join(REPO, 'tests', 'fixtures', 'perflog-fields.json')
TESTS = ('TrainingTest', 'SizeShapeGap', 'TimeToAccuracy')


def header(perflog):
    """The fields of the one header line of a ReFrame filelog perflog."""
    with open(perflog) as f:
        (line,) = [line for line in f if line.startswith('result|')]
    return line.rstrip('\n').split('|')


def lost_fields(perflog_dir, test):
    """The fields of ``test``'s header before the change that its perflog no longer has."""
    with open(FIXTURE) as f:
        before = json.load(f)[test]
    now = set(header(os.path.join(perflog_dir, 'generic', 'default', f'{test}.log')))
    return [field for field in before if field not in now]


@pytest.mark.parametrize('test', TESTS)
def test_every_perflog_field_of_before_is_logged(default_run, test):
    cwd, _ = default_run
    lost = lost_fields(os.path.join(cwd, 'perflogs'), test)
    assert not lost, f'{test}.log lost the fields {lost}'


def test_a_renamed_field_is_caught(tmp_path):
    with open(FIXTURE) as f:
        fields = json.load(f)['TrainingTest']
    renamed = ['step' if field == 'training_step' else field for field in fields]
    perflog = tmp_path / 'generic' / 'default' / 'TrainingTest.log'
    perflog.parent.mkdir(parents=True)
    perflog.write_text('|'.join(renamed) + '\n' + '|'.join('x' * len(renamed)) + '\n')
    assert lost_fields(tmp_path, 'TrainingTest') == ['training_step']
