import math

import pytest

from sizeshape_datasets import shapes
from ssb_contract.options import PixelBudget


@pytest.mark.parametrize('text, pixels', [
    ('65k', 65_000), ('360K', 360_000), ('2m', 2_000_000), ('1024', 1024), ('native', None)])
def test_parse_pixel_budget(text, pixels):
    assert PixelBudget(text).pixels == pixels and PixelBudget(text) == text


@pytest.mark.parametrize('text', ['abc', '0', '-5k', 'k', '0.5', '1000', 'inf', 'nan', '-inf',
                                  '1e400'])
def test_parse_pixel_budget_rejects(text):
    with pytest.raises(ValueError):
        PixelBudget(text)


def test_budget_shape_downscales_keeping_aspect():
    h, w = shapes.budget_shape(2667, 2900, 65_000)      # (width, height) in, (h, w) out
    assert h * w <= 65_000
    assert h * w > 0.98 * 65_000
    assert abs(w / h - 2667 / 2900) < 0.01


def test_budget_shape_upscales_to_the_budget_as_the_paper_does():
    h, w = shapes.budget_shape(100, 50, 65_000)
    assert 0.98 * 65_000 < h * w <= 65_000 and w == 2 * h
    assert shapes.budget_shape(5000, 4000, None) == (4000, 5000)        # native


def test_budget_shape_without_upscaling_keeps_small_images():
    assert shapes.budget_shape(100, 50, 65_000, upscale=False) == (50, 100)
    h, w = shapes.budget_shape(2667, 2900, 65_000, upscale=False)
    assert 0.98 * 65_000 < h * w <= 65_000


def test_buckets_are_bounded_and_contain_the_image():
    sides = range(1, 2000)
    buckets = {shapes.bucket_side(s) for s in sides}
    # One bucket per growth step from the minimum side: logarithmic, not linear, in the side.
    steps = math.log(2000 / shapes.BUCKET_MIN_SIDE) / math.log(shapes.BUCKET_GROWTH)
    assert len(buckets) <= 2 + steps
    for s in sides:
        top = max(shapes.BUCKET_MIN_SIDE, s * shapes.BUCKET_GROWTH + 1)
        assert s <= shapes.bucket_side(s) <= top
