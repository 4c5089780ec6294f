"""Input shapes: where each image ends up before it reaches the model.

Computed in Python from the JPEG headers, before any decoding, so that the
number of distinct shapes and the memory an image needs are known up front.
"""
import math

# Bucket sides grow geometrically so that the set of bucket shapes stays small
# at every resolution, and each image is padded by less than this factor per side.
BUCKET_GROWTH = 1.25
BUCKET_MIN_SIDE = 32
def budget_shape(width, height, budget, upscale=True):
    """(height, width) resized to ``budget`` pixels (at most), aspect ratio kept.

    As the MAMe baselines' R65k-VS and R360k-VS: every image is resized to the
    budget, down or up; ``upscale=False`` keeps images already within the budget
    at their native size. ``budget`` None keeps every image native (a pixel budget's
    ``pixels``: ssb_contract.options.PixelBudget).
    """
    if budget is None or (not upscale and width * height <= budget):
        return height, width
    factor = math.sqrt(budget / (width * height))
    return max(1, int(height * factor)), max(1, int(width * factor))


def bucket_side(side):
    bound = BUCKET_MIN_SIDE
    while bound < side:
        bound = math.ceil(bound * BUCKET_GROWTH)
    return bound


def bucket_shape(height, width):
    """The bounded shape an image of (height, width) is padded to when bucketing."""
    return bucket_side(height), bucket_side(width)
