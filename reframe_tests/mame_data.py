"""The data the training tests read: made once per session by a fixture."""
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, sanity_function, variable

from sizeshape_datasets import synthetic

from . import checked, payload_log, site_keys
from .environment import run_python
from .in_image import InImage


class SyntheticMAMe(rfm.RunOnlyRegressionTest, InImage):
    """A synthetic MAMe-like dataset (real JPEGs, MAMe layout) in the stage directory."""

    valid_systems = ['*']
    valid_prog_environs = [f'+{site_keys.TENSORFLOW}', 'builtin']
    # 232 training images: LR&FS epochs of 14 steps, long enough that timer and scheduler
    # noise stay well under the gap's noise limit; a validation subset that can tell
    # TimeToAccuracy's 50% from chance. One dataset for every test of the session.
    images_per_class = variable(checked.Int, value=8)
    val_per_class = variable(checked.Int, value=2)
    # Linear scale of MAMe's shapes (1: real size, median 8 Mpx); the default keeps the
    # run small while most images are above the 65k HR&VS budget, as in MAMe.
    scale = variable(checked.Float, value=0.1)
    max_mpx = variable(checked.Float, type(None), value=None)   # cap on megapixels per image
    seed = variable(checked.Int, value=0)
    subdir = variable(str, value='mame')
    time_limit = '30m'

    @run_after('setup')
    def check_variables(self):
        checked.check(self)

    @run_before('run')
    def set_command(self):
        opts = [
            '-m', 'sizeshape_datasets', 'make', '--out', self.subdir,
            '--images-per-class', str(self.images_per_class),
            '--val-per-class', str(self.val_per_class),
            '--scale', str(self.scale), '--seed', str(self.seed),
        ]
        if self.max_mpx is not None:
            opts += ['--max-mpx', str(self.max_mpx)]
        run_python(self, opts)

    @property
    def data_dir(self):
        return os.path.join(self.stagedir, self.subdir)

    @property
    def description(self):
        return (f'synthetic-mame images_per_class={self.images_per_class} '
                f'val_per_class={self.val_per_class} scale={self.scale} max_mpx={self.max_mpx} '
                f'seed={self.seed}')

    def images(self, subset):
        per_class = {'train': self.images_per_class, 'val': self.val_per_class}.get(subset, 0)
        return len(synthetic.MEDIUMS) * per_class

    @sanity_function
    def dataset_made(self):
        return sn.all([payload_log.assert_no_error(self.stderr), sn.assert_eq(
            sn.extractsingle(r'"images": (\d+)', self.stdout, 1, int), self.images('train'),
            msg='dataset has {0} training images, expected {1}')])
