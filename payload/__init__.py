"""size-shape-bench training payload: plain TensorFlow/Keras, no ReFrame import.

Run as ``python -m payload --variant lrfs|hrvs --data-dir DIR ...``; see README.md
for the options and the output contract (``SSB-EPOCH`` / ``SSB-SUMMARY`` lines).
"""


MODELS = ('smallcnn', 'resnet50', 'vgg16')
# split: gradients traced per input shape, the optimizer update once; fused: one graph.
STEPS = ('split', 'fused')


class PayloadError(Exception):
    """A failure the user can act on; printed as one ``error: ...`` line."""
