"""mmpar.image.colorspace: OpenCV conversions and the BT.601 YCbCr formulas."""

import cv2
import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from mmpar import image as mmimage
from mmpar.image import colorspace


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("bgr2rgb", cv2.COLOR_BGR2RGB),
        ("rgb2bgr", cv2.COLOR_RGB2BGR),
        ("bgr2hsv", cv2.COLOR_BGR2HSV),
        ("hsv2bgr", cv2.COLOR_HSV2BGR),
        ("bgr2hls", cv2.COLOR_BGR2HLS),
        ("hls2bgr", cv2.COLOR_HLS2BGR),
    ],
)
def test_opencv_conversions(bgr, name, code):
    assert_array_equal(getattr(mmimage, name)(bgr), cv2.cvtColor(bgr, code))
    assert getattr(mmimage, name).__name__ == name


def test_bgr2rgb_swaps_channels(bgr):
    assert_array_equal(mmimage.bgr2rgb(bgr), bgr[..., ::-1])


def test_gray_conversions(bgr, gray):
    assert_array_equal(mmimage.bgr2gray(bgr), cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY))
    assert_array_equal(mmimage.rgb2gray(bgr), cv2.cvtColor(bgr, cv2.COLOR_RGB2GRAY))
    assert mmimage.bgr2gray(bgr, keepdim=True).shape == (24, 32, 1)
    assert mmimage.rgb2gray(bgr, keepdim=True).shape == (24, 32, 1)
    for name in ("gray2bgr", "gray2rgb"):
        for img in (gray, gray[..., None]):
            out = getattr(mmimage, name)(img)
            assert out.shape == (24, 32, 3)
            assert_array_equal(out, np.repeat(gray[..., None], 3, axis=-1))


def test_imconvert(bgr):
    assert_array_equal(mmimage.imconvert(bgr, "bgr", "lab"), cv2.cvtColor(bgr, cv2.COLOR_BGR2LAB))
    assert_array_equal(mmimage.imconvert(bgr, "BGR", "Rgb"), bgr[..., ::-1])
    with pytest.raises(AttributeError, match="COLOR_BGR2NOPE"):
        mmimage.imconvert(bgr, "bgr", "nope")
    convert = colorspace.convert_color_factory("bgr", "lab")
    assert_array_equal(convert(bgr), cv2.cvtColor(bgr, cv2.COLOR_BGR2LAB))


def _ycbcr(rgb01):
    """BT.601 studio range from RGB in [0, 1] (Y in [16, 235], Cb/Cr in [16, 240])."""
    r, g, b = rgb01[..., 0], rgb01[..., 1], rgb01[..., 2]
    y = 16 + 65.481 * r + 128.553 * g + 24.966 * b
    cb = 128 - 37.797 * r - 74.203 * g + 112.0 * b
    cr = 128 + 112.0 * r - 93.786 * g - 18.214 * b
    return np.stack([y, cb, cr], axis=-1)


def test_ycbcr_known_values():
    white = np.full((1, 1, 3), 255, np.uint8)
    black = np.zeros((1, 1, 3), np.uint8)
    assert_array_equal(mmimage.rgb2ycbcr(white), [[[235, 128, 128]]])
    assert_array_equal(mmimage.rgb2ycbcr(black), [[[16, 128, 128]]])
    assert_array_equal(mmimage.bgr2ycbcr(white, y_only=True), [[235]])


def test_ycbcr_uint8_and_float(bgr):
    rgb = bgr[..., ::-1]
    expected = _ycbcr(rgb.astype(np.float64) / 255)
    as_uint8 = mmimage.rgb2ycbcr(rgb)
    assert as_uint8.dtype == np.uint8
    assert np.abs(as_uint8.astype(float) - expected).max() <= 0.5 + 1e-4
    assert_array_equal(mmimage.bgr2ycbcr(bgr), as_uint8)
    assert_array_equal(mmimage.bgr2ycbcr(bgr, y_only=True), mmimage.rgb2ycbcr(rgb, y_only=True))
    as_float = mmimage.rgb2ycbcr(rgb.astype(np.float32) / 255)
    assert as_float.dtype == np.float32
    assert_allclose(as_float, expected / 255, atol=1e-5)


def test_ycbcr_round_trip(bgr):
    back = mmimage.ycbcr2bgr(mmimage.bgr2ycbcr(bgr))
    assert back.dtype == np.uint8
    # Quantising YCbCr to 8 bits loses a little: at most a couple of levels.
    assert np.abs(back.astype(int) - bgr).max() <= 2
    assert_array_equal(mmimage.ycbcr2rgb(mmimage.bgr2ycbcr(bgr)), back[..., ::-1])
    floats = bgr.astype(np.float32) / 255
    assert_allclose(mmimage.ycbcr2rgb(mmimage.rgb2ycbcr(floats)), floats, atol=1e-4)


@pytest.mark.parametrize("name", ["rgb2ycbcr", "bgr2ycbcr", "ycbcr2rgb", "ycbcr2bgr"])
def test_ycbcr_rejects_other_dtypes(bgr, name):
    with pytest.raises(TypeError):
        getattr(mmimage, name)(bgr.astype(np.float64))
