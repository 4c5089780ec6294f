"""Per-system performance references of size-shape-bench: propose, diff, update, drift, report,
compare, and the scheduled acceptance run. ``python -m ssb_references --help`` (console script
``ssb-references``) and ``ssb-acceptance``; see docs/references.md and docs/acceptance.md.

Layers, each importing only those before it:

- runs/: one run of a test, read from perflogs or ReFrame's results database;
- reffile/: the per-system reference files (read, write), the threshold rule, proposals;
- judge/: drift against the history of a workload, an acceptance session's verdict, the
  statistics of both;
- report/: tables and plots of a system's runs;
- compare/: systems side by side, or one system before and after;
- cli/: the ``ssb-references`` command;
- acceptance/: the ``ssb-acceptance`` command, its output directory and notification.
"""
from ssb_common.provenance import suite_version

__version__ = suite_version() or 'unknown'
