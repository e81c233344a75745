"""mmpar.image.photometric: results against numpy formulas, OpenCV and Pillow."""

import cv2
import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from PIL import Image, ImageEnhance, ImageOps

from mmpar import image as mmimage

MEAN = np.array([123.675, 116.28, 103.53])
STD = np.array([58.395, 57.12, 57.375])


def _pil(bgr):
    return Image.fromarray(np.ascontiguousarray(bgr[..., ::-1]))


def _bgr(pil_image):
    return np.array(pil_image)[..., ::-1]


def test_imnormalize_is_float32_rgb_and_leaves_the_input(bgr):
    before = bgr.copy()
    normalized = mmimage.imnormalize(bgr, MEAN, STD)
    assert normalized.dtype == np.float32
    expected = (bgr[..., ::-1].astype(np.float64) - MEAN) / STD
    assert_allclose(normalized, expected, rtol=1e-5, atol=1e-5)
    assert_array_equal(bgr, before)
    kept_order = mmimage.imnormalize(bgr, MEAN, STD, to_rgb=False)
    assert_allclose(kept_order, (bgr - MEAN) / STD, rtol=1e-5, atol=1e-5)


def test_imnormalize_inplace_and_denormalize_round_trip(bgr):
    img = bgr.astype(np.float32)
    result = mmimage.imnormalize_(img, MEAN, STD)
    assert result is img
    restored = mmimage.imdenormalize(img, MEAN, STD)
    assert_allclose(restored, bgr, atol=1e-3)
    with pytest.raises(AssertionError):
        mmimage.imnormalize_(bgr.copy(), MEAN, STD)
    with pytest.raises(AssertionError):
        mmimage.imdenormalize(bgr, MEAN, STD)


def test_iminvert_solarize_posterize(bgr):
    assert_array_equal(mmimage.iminvert(bgr), 255 - bgr)
    solarized = mmimage.solarize(bgr, 100)
    assert_array_equal(solarized, np.where(bgr < 100, bgr, 255 - bgr))
    assert_array_equal(_bgr(ImageOps.solarize(_pil(bgr), 100)), solarized)
    posterized = mmimage.posterize(bgr, 3)
    assert_array_equal(posterized, bgr & 0b11100000)
    assert_array_equal(_bgr(ImageOps.posterize(_pil(bgr), 3)), posterized)


def test_adjust_brightness(bgr):
    assert_array_equal(mmimage.adjust_brightness(bgr, 1.0), bgr)
    assert_array_equal(mmimage.adjust_brightness(bgr, 0.0), np.zeros_like(bgr))
    brighter = mmimage.adjust_brightness(bgr, 1.7)
    assert_array_equal(brighter, np.clip(bgr.astype(np.float32) * 1.7, 0, 255).astype(np.uint8))
    pillow = mmimage.adjust_brightness(bgr, 1.7, backend="pillow")
    assert_array_equal(pillow, _bgr(ImageEnhance.Brightness(_pil(bgr)).enhance(1.7)))
    # OpenCV truncates, Pillow rounds: they differ by at most one level.
    assert np.abs(pillow.astype(int) - brighter).max() <= 1


def test_adjust_contrast(bgr):
    gray = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    mean = round(gray.sum() / gray.size)
    result = mmimage.adjust_contrast(bgr, 0.4)
    expected = np.clip(bgr * np.float32(0.4) + np.float32(mean) * np.float32(0.6), 0, 255)
    assert_array_equal(result, expected.astype(np.uint8))
    assert (mmimage.adjust_contrast(bgr, 0.0) == mean).all()
    pillow = mmimage.adjust_contrast(bgr, 0.4, backend="pillow")
    assert_array_equal(pillow, _bgr(ImageEnhance.Contrast(_pil(bgr)).enhance(0.4)))


def test_adjust_color(bgr):
    gray = np.repeat(cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)[..., None], 3, axis=-1)
    assert_array_equal(mmimage.adjust_color(bgr, 0), gray)
    blended = mmimage.adjust_color(bgr, 1.5, 0.2, 3)
    assert_array_equal(blended, cv2.addWeighted(bgr, 1.5, gray, 0.2, 3))
    with pytest.warns(UserWarning, match="alpha"):
        pillow = mmimage.adjust_color(bgr, 0.3, backend="pillow")
    assert_array_equal(pillow, _bgr(ImageEnhance.Color(_pil(bgr)).enhance(0.3)))
    as_float = mmimage.adjust_color(bgr.astype(np.float32) * 1.2, 1.1)
    assert as_float.dtype == np.float32 and as_float.max() <= 255


def test_adjust_sharpness(bgr):
    assert_array_equal(mmimage.adjust_sharpness(bgr, 1.0), bgr)
    kernel = np.array([[1.0, 1.0, 1.0], [1.0, 5.0, 1.0], [1.0, 1.0, 1.0]]) / 13
    assert_array_equal(mmimage.adjust_sharpness(bgr, 0.0), cv2.filter2D(bgr, -1, kernel))
    box = np.ones((3, 3)) / 9
    assert_array_equal(mmimage.adjust_sharpness(bgr, 0.0, box), cv2.blur(bgr, (3, 3)))
    with pytest.raises(AssertionError):
        mmimage.adjust_sharpness(bgr, 1.0, kernel=[[1.0]])
    with pytest.raises(AssertionError):
        mmimage.adjust_sharpness(bgr, 1.0, kernel=np.ones(3))


@pytest.mark.parametrize("backend", ["cv2", "pillow"])
def test_backend_errors(bgr, backend):
    for function in (mmimage.adjust_brightness, mmimage.adjust_contrast, mmimage.adjust_color):
        with pytest.raises(ValueError):
            function(bgr, 0.5, backend="tifffile")
    with pytest.raises(AssertionError):
        mmimage.adjust_brightness(bgr.astype(np.float32), 0.5, backend="pillow")


def test_imequalize_equals_pil(bgr):
    low_contrast = (bgr // 4 + 60).astype(np.uint8)
    equalized = mmimage.imequalize(low_contrast)
    assert equalized.dtype == np.uint8
    assert_array_equal(equalized, _bgr(ImageOps.equalize(_pil(low_contrast))))
    flat = np.full((4, 4, 3), 7, np.uint8)
    assert_array_equal(mmimage.imequalize(flat), flat)


@pytest.mark.parametrize("cutoff", [0, 2, (1, 10)])
def test_auto_contrast_equals_pil(bgr, cutoff):
    low_contrast = (bgr // 4 + 60).astype(np.uint8)
    result = mmimage.auto_contrast(low_contrast, cutoff)
    assert result.dtype == np.uint8
    expected = ImageOps.autocontrast(_pil(low_contrast), cutoff)  # (low, high) as mmcv
    assert_array_equal(result, _bgr(expected))


def test_auto_contrast_stretches_to_full_range(bgr):
    low_contrast = (bgr // 4 + 60).astype(np.uint8)
    result = mmimage.auto_contrast(low_contrast)
    for c in range(3):
        assert result[..., c].min() == 0 and result[..., c].max() == 255
    with pytest.raises(AssertionError):
        mmimage.auto_contrast(bgr, [1, 2])


def test_adjust_lighting_uses_numpys_rng(bgr):
    eigval = np.array([55.46, 4.794, 1.148])
    eigvec = np.array(
        [[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.814], [-0.5836, -0.6948, 0.4203]]
    )
    np.random.seed(1)
    result = mmimage.adjust_lighting(bgr, eigval, eigvec, alphastd=0.5)
    np.random.seed(1)
    alpha = np.random.normal(0, 0.5, 3)
    expected = bgr[..., ::-1].astype(np.float32) + eigvec @ (alpha * eigval)
    assert_allclose(result, expected, rtol=1e-6)
    unchanged = mmimage.adjust_lighting(bgr, eigval, eigvec, alphastd=0.0, to_rgb=False)
    assert_array_equal(unchanged, bgr)
    with pytest.raises(AssertionError):
        mmimage.adjust_lighting(bgr, eigval, eigvec, alphastd=1)  # must be a float
    with pytest.raises(AssertionError):
        mmimage.adjust_lighting(bgr, eigval[:2], eigvec)


def test_lut_transform(bgr):
    table = (255 - np.arange(256)).astype(np.uint8)
    assert_array_equal(mmimage.lut_transform(bgr, table), 255 - bgr)
    assert_array_equal(mmimage.lut_transform(bgr, table), cv2.LUT(bgr, table))
    with pytest.raises(AssertionError):
        mmimage.lut_transform(bgr, table[:10])
    with pytest.raises(AssertionError):
        mmimage.lut_transform(bgr.astype(np.int32) + 300, table)


def test_clahe_equals_opencv(gray, bgr):
    expected = cv2.createCLAHE(2.0, (4, 2)).apply(gray)
    assert_array_equal(mmimage.clahe(gray, 2.0, (4, 2)), expected)
    assert_array_equal(mmimage.clahe(gray), cv2.createCLAHE(40.0, (8, 8)).apply(gray))
    with pytest.raises(AssertionError):
        mmimage.clahe(bgr)
    with pytest.raises(AssertionError):
        mmimage.clahe(gray, 2.0, (4.0, 2.0))


@pytest.mark.parametrize("factor", [0.0, 0.2, -0.3, 0.5])
def test_adjust_hue(bgr, factor):
    result = mmimage.adjust_hue(bgr, factor)
    hsv = cv2.cvtColor(bgr, cv2.COLOR_BGR2HSV_FULL)
    # The shift wraps around the hue circle, negative factors included.
    hsv[..., 0] = (hsv[..., 0].astype(int) + int(factor * 255)) % 256
    assert_array_equal(result, cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR_FULL))
    pillow = mmimage.adjust_hue(bgr, factor, backend="pillow")
    h, s, v = _pil(bgr).convert("HSV").split()
    h = Image.fromarray(((np.array(h).astype(int) + int(factor * 255)) % 256).astype(np.uint8))
    assert_array_equal(pillow, _bgr(Image.merge("HSV", (h, s, v)).convert("RGB")))


def test_adjust_hue_errors(bgr):
    with pytest.raises(ValueError):
        mmimage.adjust_hue(bgr, 0.6)
    with pytest.raises(ValueError):
        mmimage.adjust_hue(bgr, 0.1, backend="turbojpeg")
    with pytest.raises(TypeError):
        mmimage.adjust_hue(bgr[None], 0.1)
