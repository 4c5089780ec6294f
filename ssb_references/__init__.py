"""Per-system performance references of size-shape-bench: propose, diff, update, drift, report.

``python -m ssb_references --help`` (console script ``ssb-references``); see docs/references.md.
"""
import importlib.metadata

try:        # the suite's one version: setup.cfg's, as installed
    __version__ = importlib.metadata.version('size-shape-bench')
except importlib.metadata.PackageNotFoundError:
    __version__ = 'unknown'

#: The ReFrame test whose runs the references are for.
TEST_NAME = 'TrainingTest'
