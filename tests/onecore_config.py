"""A second local system for tests/test_compare.py: ``onecore``, ReFrame's generic system
under another name (local scheduler and launcher, the builtin environment), with the suite's
shared logging, so that its perflogs read as every site's do. The test pins its runs to one
core with ``taskset -c 0``."""
import os

import reframe.utility as util

common = util.import_module_from_file(
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'site_configs',
                 'common.py'))

site_configuration = common.site_configuration(
    systems=[{
        'name': 'onecore',
        'descr': 'this machine, its runs pinned to one core',
        'hostnames': ['.*'],
        'partitions': [{
            'name': 'default',
            'descr': 'local jobs on one core',
            'scheduler': 'local',
            'launcher': 'local',
            'environs': ['builtin'],
            'features': [],
            'extras': {},
        }],
    }],
    environments=[],
)
