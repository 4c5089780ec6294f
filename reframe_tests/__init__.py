"""ReFrame tests of size-shape-bench: ``reframe -c reframe_tests -r``."""
