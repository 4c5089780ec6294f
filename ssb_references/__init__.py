"""Per-system performance references of size-shape-bench: propose, diff, update, drift, report.

``python -m ssb_references --help`` (console script ``ssb-references``); see README.md, "References and acceptance testing".
"""
__version__ = '0.1.0'

#: The ReFrame test whose runs the references are for.
TEST_NAME = 'TrainingTest'
