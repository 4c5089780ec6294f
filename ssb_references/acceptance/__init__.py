"""ssb-acceptance: one scheduled acceptance run, judged, reported and kept, its output
directory and its notification."""
