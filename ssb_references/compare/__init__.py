"""ssb-references compare: systems side by side, or one system before and after, and the
files and picture it writes."""
