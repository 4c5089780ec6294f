"""Input shapes: where each image ends up before it reaches the model.

Computed in Python from the JPEG headers, before any decoding, so that the
number of distinct shapes and the memory an image needs are known up front.
"""
import math

# Bucket sides grow geometrically so that the set of bucket shapes stays small
# at every resolution, and each image is padded by less than this factor per side.
BUCKET_GROWTH = 1.25
BUCKET_MIN_SIDE = 32
# The smallest pixel budget: a 32x32 image, the least that ResNet-50's and VGG-16's five
# 2x downsamplings leave one pixel of (a budget of 0.5 px gave 1x1 images).
MIN_PIXEL_BUDGET = 32 * 32


def parse_pixel_budget(text):
    """'65k' -> 65000, '360k' -> 360000, '2m' -> 2000000, 'native' -> None."""
    value = text.strip().lower()
    if value == 'native':
        return None
    multiplier = {'k': 1_000, 'm': 1_000_000}.get(value[-1:], 1)
    try:
        number = float(value[:-1] if multiplier > 1 else value)
    except ValueError:
        raise ValueError(f'pixel budget {text!r} is not a number, "65k", "1m" or '
                         f'"native"') from None
    if not math.isfinite(number) or number * multiplier < MIN_PIXEL_BUDGET:
        raise ValueError(f'pixel budget {text!r} must be a finite number of at least '
                         f'{MIN_PIXEL_BUDGET} pixels (32x32), or "native"')
    return int(number * multiplier)


def budget_shape(width, height, pixel_budget, upscale=True):
    """(height, width) resized to ``pixel_budget`` pixels (at most), aspect ratio kept.

    As the MAMe baselines' R65k-VS and R360k-VS: every image is resized to the
    budget, down or up; ``upscale=False`` keeps images already within the budget
    at their native size. ``pixel_budget`` None keeps every image native.
    """
    if pixel_budget is None or (not upscale and width * height <= pixel_budget):
        return height, width
    factor = math.sqrt(pixel_budget / (width * height))
    return max(1, int(height * factor)), max(1, int(width * factor))


def bucket_side(side):
    bound = BUCKET_MIN_SIDE
    while bound < side:
        bound = math.ceil(bound * BUCKET_GROWTH)
    return bound


def bucket_shape(height, width):
    """The bounded shape an image of (height, width) is padded to when bucketing."""
    return bucket_side(height), bucket_side(width)
