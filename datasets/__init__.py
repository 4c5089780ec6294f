"""Dataset descriptions and tools for size-shape-bench.

Installed as ``sizeshape_datasets`` (the folder is ``datasets/``): a synthetic
MAMe-like generator, a reader for the real MAMe layout and HDF5 packing.
"""
