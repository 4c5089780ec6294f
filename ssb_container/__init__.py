"""``ssb-container``: build the suite's container image with Charliecloud, no registry.

The recipe is site_configs/container/Dockerfile; docs/clusters.md, "Containers", says how
tests run in the image.
"""
