"""Dataset descriptions and tools for size-shape-bench.

Named ``sizeshape_datasets`` so that it never shadows Hugging Face's ``datasets``: a synthetic
MAMe-like generator, a reader for the real MAMe layout and HDF5 packing.
"""
