"""``ssb-references dashboard``: every system's history as one self-contained HTML page
(docs/dashboard.md). series.py computes what is shown, figures.py draws it with Bokeh,
page.py writes the page, build.py puts them together (for cli/dashboard_command.py and
ssb-acceptance)."""
