"""size-shape-bench training payload: plain TensorFlow/Keras, no ReFrame import.

Run as ``python -m payload --variant lrfs|hrvs --data-dir DIR ...``; see docs/payload.md
for the options and the output contract (``SSB-EPOCH`` / ``SSB-SUMMARY`` lines).
"""


# The payload's own version, in every SSB-SUMMARY and perflog record. The rule
# (docs/versions.md): bump the minor version with any change that can move a
# measured number (input pipeline, training step, timing, what is counted), the
# major version with any change of the output contract, the patch version else.
# ssb-references refuses to mix runs of different major.minor versions.
PAYLOAD_VERSION = '2.0.0'


class PayloadError(Exception):
    """A failure the user can act on; printed as one ``error: ...`` line."""
