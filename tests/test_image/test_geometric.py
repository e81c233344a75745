"""mmpar.image.geometric: each result is compared with the OpenCV/Pillow call mmcv makes."""

import cv2
import numpy as np
import pytest
from numpy.testing import assert_array_equal
from PIL import Image

from mmpar import image as mmimage
from mmpar.image import geometric

CV2_CODES = {
    "nearest": cv2.INTER_NEAREST,
    "bilinear": cv2.INTER_LINEAR,
    "bicubic": cv2.INTER_CUBIC,
    "area": cv2.INTER_AREA,
    "lanczos": cv2.INTER_LANCZOS4,
}


def test_code_tables_are_mmcvs():
    assert geometric.cv2_interp_codes == CV2_CODES
    assert geometric.cv2_border_modes == {
        "constant": cv2.BORDER_CONSTANT,
        "replicate": cv2.BORDER_REPLICATE,
        "reflect": cv2.BORDER_REFLECT,
        "wrap": cv2.BORDER_WRAP,
        "reflect_101": cv2.BORDER_REFLECT_101,
        "transparent": cv2.BORDER_TRANSPARENT,
        "isolated": cv2.BORDER_ISOLATED,
    }
    assert set(geometric.pillow_interp_codes) == {
        "nearest",
        "bilinear",
        "bicubic",
        "box",
        "lanczos",
        "hamming",
    }
    assert geometric.pillow_interp_codes["bicubic"] == Image.Resampling.BICUBIC


@pytest.mark.parametrize("interpolation", sorted(CV2_CODES))
@pytest.mark.parametrize("kind", ["bgr", "gray", "float"])
def test_imresize_equals_cv2_resize(bgr, gray, interpolation, kind):
    img = {"bgr": bgr, "gray": gray, "float": bgr.astype(np.float32) / 255}[kind]
    resized, w_scale, h_scale = mmimage.imresize(img, (17, 40), True, interpolation)
    expected = cv2.resize(img, (17, 40), interpolation=CV2_CODES[interpolation])
    assert resized.dtype == img.dtype and resized.shape[:2] == (40, 17)
    assert_array_equal(resized, expected)
    assert (w_scale, h_scale) == (17 / 32, 40 / 24)


@pytest.mark.parametrize("interpolation", ["nearest", "bilinear", "bicubic", "box", "lanczos"])
def test_imresize_pillow_backend_equals_pil(bgr, interpolation):
    resized = mmimage.imresize(bgr, (17, 40), interpolation=interpolation, backend="pillow")
    codes = geometric.pillow_interp_codes
    expected = np.array(Image.fromarray(bgr).resize((17, 40), codes[interpolation]))
    assert_array_equal(resized, expected)


def test_imresize_out_and_errors(bgr):
    out = np.zeros((10, 11, 3), np.uint8)
    result = mmimage.imresize(bgr, (11, 10), out=out)
    assert_array_equal(out, cv2.resize(bgr, (11, 10)))
    assert_array_equal(result, out)
    with pytest.raises(ValueError, match="turbojpeg"):
        mmimage.imresize(bgr, (5, 5), backend="turbojpeg")
    with pytest.raises(AssertionError):
        mmimage.imresize(bgr.astype(np.float32), (5, 5), backend="pillow")
    with pytest.raises(KeyError):
        mmimage.imresize(bgr, (5, 5), interpolation="box")  # a Pillow-only filter


def test_backend_none_resizes_with_opencv_whatever_the_decoder(bgr):
    # mmcv's transforms never followed use_backend (they read it once, at import); mmaction2
    # decodes with another backend and resizes with backend=None.
    try:
        mmimage.use_backend("pillow")
        assert_array_equal(
            mmimage.imresize(bgr, (7, 9), interpolation="area"),
            cv2.resize(bgr, (7, 9), interpolation=cv2.INTER_AREA),
        )
    finally:
        mmimage.use_backend("cv2")


@pytest.mark.parametrize(
    ("scale", "size", "factor"),
    [
        (0.5, (16, 12), 0.5),
        (1.3, (42, 31), 1.3),  # 41.6 -> 42, 31.2 -> 31 (rounded half up)
        ((100, 50), (67, 50), 50 / 24),  # long edge <= 100, short edge <= 50
        ((50, 100), (67, 50), 50 / 24),  # the order of the limits does not matter
        ((1000, 20), (27, 20), 20 / 24),
        ((40, 40), (40, 30), 40 / 32),
    ],
)
def test_rescale_size_and_imrescale(bgr, scale, size, factor):
    assert mmimage.rescale_size((32, 24), scale) == size
    new_size, used = mmimage.rescale_size((32, 24), scale, return_scale=True)
    assert new_size == size and used == pytest.approx(factor)
    rescaled, used = mmimage.imrescale(bgr, scale, return_scale=True)
    assert_array_equal(rescaled, cv2.resize(bgr, size, interpolation=cv2.INTER_LINEAR))
    assert used == pytest.approx(factor)


def test_rescale_size_errors():
    with pytest.raises(ValueError):
        mmimage.rescale_size((10, 10), -1)
    with pytest.raises(TypeError):
        mmimage.rescale_size((10, 10), [3, 4])


def test_imresize_to_multiple(bgr):
    resized, w_scale, h_scale = mmimage.imresize_to_multiple(
        bgr, 4, size=(18, 9), return_scale=True
    )
    assert resized.shape == (12, 20, 3) and (w_scale, h_scale) == (20 / 32, 12 / 24)
    # keep_ratio fits (13, 13) -> (13, 10), then rounds up to multiples of (3, 5): (15, 10).
    kept = mmimage.imresize_to_multiple(bgr, (3, 5), size=13, keep_ratio=True)
    assert kept.shape == (10, 15, 3)
    scaled = mmimage.imresize_to_multiple(bgr, 8, scale_factor=(0.5, 1.7))
    assert scaled.shape == (48, 16, 3)
    assert_array_equal(scaled, cv2.resize(bgr, (16, 48)))
    with pytest.raises(ValueError):
        mmimage.imresize_to_multiple(bgr, 4)
    with pytest.raises(ValueError):
        mmimage.imresize_to_multiple(bgr, 4, size=3, scale_factor=2)


def test_imresize_like(bgr, gray):
    resized, w_scale, h_scale = mmimage.imresize_like(bgr, gray[:5, :7], return_scale=True)
    assert_array_equal(resized, cv2.resize(bgr, (7, 5)))
    assert (w_scale, h_scale) == (7 / 32, 5 / 24)


@pytest.mark.parametrize(
    ("direction", "cv2_code", "axis"),
    [("horizontal", 1, 1), ("vertical", 0, 0), ("diagonal", -1, (0, 1))],
)
def test_imflip_and_inplace(bgr, direction, cv2_code, axis):
    flipped = mmimage.imflip(bgr, direction)
    assert_array_equal(flipped, np.flip(bgr, axis))
    assert_array_equal(flipped, cv2.flip(bgr, cv2_code))
    copy = bgr.copy()
    result = mmimage.imflip_(copy, direction)
    assert result is copy
    assert_array_equal(copy, cv2.flip(bgr, cv2_code))


def test_imflip_rejects_unknown_direction(bgr):
    with pytest.raises(AssertionError):
        mmimage.imflip(bgr, "sideways")
    with pytest.raises(AssertionError):
        mmimage.imflip_(bgr.copy(), "sideways")


def test_imrotate_small_cases():
    img = np.arange(1, 10, dtype=np.uint8).reshape(3, 3)
    assert_array_equal(mmimage.imrotate(img, 0), img)
    assert_array_equal(mmimage.imrotate(img, 90), [[7, 4, 1], [8, 5, 2], [9, 6, 3]])  # clockwise
    assert_array_equal(mmimage.imrotate(img, -90), [[3, 6, 9], [2, 5, 8], [1, 4, 7]])
    wide = np.arange(1, 9, dtype=np.uint8).reshape(2, 4)
    assert_array_equal(mmimage.imrotate(wide, 90), [[0, 6, 2, 0], [0, 7, 3, 0]])
    assert_array_equal(mmimage.imrotate(wide, 90, center=(0, 0)), [[1, 0, 0, 0], [2, 0, 0, 0]])
    bordered = mmimage.imrotate(wide, 90, border_value=255)
    assert_array_equal(bordered, [[255, 6, 2, 255], [255, 7, 3, 255]])
    bounded = mmimage.imrotate(wide, 90, auto_bound=True)
    assert_array_equal(bounded, [[5, 1], [6, 2], [7, 3], [8, 4]])
    with pytest.raises(ValueError):
        mmimage.imrotate(wide, 90, center=(0, 0), auto_bound=True)


def test_imrotate_equals_warp_affine_about_the_centre(bgr):
    rotated = mmimage.imrotate(
        bgr, 30, scale=1.2, border_value=(1, 2, 3), interpolation="bicubic", border_mode="reflect"
    )
    matrix = cv2.getRotationMatrix2D((15.5, 11.5), -30, 1.2)
    expected = cv2.warpAffine(
        bgr,
        matrix,
        (32, 24),
        flags=cv2.INTER_CUBIC,
        borderMode=cv2.BORDER_REFLECT,
        borderValue=(1, 2, 3),
    )
    assert_array_equal(rotated, expected)
    bounded = mmimage.imrotate(bgr, 90, auto_bound=True)
    assert bounded.shape == (32, 24, 3)
    assert_array_equal(bounded, np.rot90(bgr, -1))


def test_imcrop(bgr, gray):
    boxes = np.array([[2, 3, 10, 15], [-5, -3, 40, 30]], dtype=np.float64)
    patches = mmimage.imcrop(bgr, boxes)
    assert_array_equal(patches[0], bgr[3:16, 2:11])
    assert_array_equal(patches[1], bgr)  # clipped to the image
    single = mmimage.imcrop(bgr, boxes[0])
    assert isinstance(single, np.ndarray)
    assert_array_equal(single, bgr[3:16, 2:11])
    # scale 2 about the centre: (2, 3, 10, 15) is 9x13 -> (-2.5, -3.5, 14.5, 21.5) -> int32
    scaled = mmimage.imcrop(bgr, boxes[0], scale=2.0)
    assert_array_equal(scaled, bgr[0:22, 0:15])
    padded = mmimage.imcrop(bgr, boxes[0], scale=2.0, pad_fill=[1, 2, 3])
    assert padded.shape == (25, 17, 3)  # -3..21 by -2..14
    assert_array_equal(padded[:3, :, :], np.broadcast_to(np.array([1, 2, 3], np.uint8), (3, 17, 3)))
    assert_array_equal(padded[3:, 2:], bgr[0:22, 0:15])
    gray_patch = mmimage.imcrop(gray, boxes[0], scale=2.0, pad_fill=9)
    assert gray_patch.shape == (25, 17) and (gray_patch[:3] == 9).all()
    with pytest.raises(AssertionError):
        mmimage.imcrop(bgr, boxes, pad_fill=[1, 2])


def test_bbox_helpers():
    boxes = np.array([[-3.0, 2.0, 50.0, 9.0]])
    assert_array_equal(geometric.bbox_clip(boxes, (10, 20)), [[0, 2, 19, 9]])
    scaled = geometric.bbox_scaling(np.array([[0.0, 0.0, 9.0, 3.0]]), 2.0)
    assert_array_equal(scaled, [[-5, -2, 14, 5]])
    assert_array_equal(geometric.bbox_scaling(boxes, 1.0, clip_shape=(10, 20)), [[0, 2, 19, 9]])


@pytest.mark.parametrize(
    ("mode", "border"),
    [
        ("constant", cv2.BORDER_CONSTANT),
        ("edge", cv2.BORDER_REPLICATE),
        ("reflect", cv2.BORDER_REFLECT_101),
        ("symmetric", cv2.BORDER_REFLECT),
    ],
)
def test_impad_modes_equal_copy_make_border(bgr, mode, border):
    padded = mmimage.impad(bgr, padding=(1, 2, 3, 4), pad_val=(9, 8, 7), padding_mode=mode)
    expected = cv2.copyMakeBorder(bgr, 2, 4, 1, 3, border, value=(9, 8, 7))
    assert padded.shape == (30, 36, 3)
    assert_array_equal(padded, expected)


def test_impad_shape_and_padding_forms(bgr, gray):
    padded = mmimage.impad(bgr, shape=(30, 40), pad_val=(100, 110, 120))
    assert padded.shape == (30, 40, 3)
    assert_array_equal(padded[:24, :32], bgr)
    assert (padded[24:] == [100, 110, 120]).all() and (padded[:, 32:] == [100, 110, 120]).all()
    # A smaller shape pads nothing on that side.
    assert mmimage.impad(gray, shape=(10, 40)).shape == (24, 40)
    both = mmimage.impad(gray, padding=(5, 2), pad_val=3)
    assert both.shape == (28, 42)
    assert_array_equal(both[2:26, 5:37], gray)
    assert (both[:2] == 3).all() and (both[:, :5] == 3).all()
    assert mmimage.impad(bgr, padding=3).shape == (30, 38, 3)
    # A single number fills only the first channel of a colour image (OpenCV's Scalar(v)), as
    # mmcv: pass a tuple for every channel.
    assert_array_equal(mmimage.impad(bgr, padding=1, pad_val=5)[0, 0], [5, 0, 0])


def test_impad_errors(bgr):
    with pytest.raises(AssertionError):
        mmimage.impad(bgr, shape=(30, 40), padding=1)
    with pytest.raises(AssertionError):
        mmimage.impad(bgr)
    with pytest.raises(ValueError):
        mmimage.impad(bgr, padding=(1, 2, 3))
    with pytest.raises(TypeError):
        mmimage.impad(bgr, padding=1, pad_val="white")
    with pytest.raises(TypeError):
        mmimage.impad(bgr, padding=1, pad_val=[1, 2, 3])  # a list is not accepted, as in mmcv
    with pytest.raises(AssertionError):
        mmimage.impad(bgr, padding=1, pad_val=(1, 2))
    with pytest.raises(AssertionError):
        mmimage.impad(bgr, padding=1, padding_mode="wrap")
    with pytest.raises(TypeError):
        mmimage.impad(bgr, (30, 40))  # shape is keyword-only


def test_impad_to_multiple(bgr, gray):
    padded = mmimage.impad_to_multiple(bgr, 5, pad_val=(1, 2, 3))
    assert padded.shape == (25, 35, 3)
    assert_array_equal(padded[:24, :32], bgr)
    assert mmimage.impad_to_multiple(gray, 8).shape == (24, 32)


def test_cutout_follows_numpys_global_rng(bgr, gray):
    np.random.seed(3)
    result = mmimage.cutout(bgr, (3, 7), pad_val=(1, 2, 3))
    np.random.seed(3)
    y0, x0 = np.random.uniform(24), np.random.uniform(32)
    y1, x1 = int(max(0, y0 - 1.5)), int(max(0, x0 - 3.5))
    expected = bgr.copy()
    expected[y1 : y1 + 3, x1 : x1 + 7] = (1, 2, 3)
    assert_array_equal(result, expected)
    assert (result != bgr).any()
    np.random.seed(0)
    square = mmimage.cutout(gray, 4, pad_val=0)
    assert square.shape == gray.shape and (square == 0).sum() >= 1
    with pytest.raises(TypeError):
        mmimage.cutout(bgr, 4, pad_val=[1, 2, 3])
    with pytest.raises(AssertionError):
        mmimage.cutout(bgr, [2, 3])


def test_imshear_and_imtranslate_small_cases():
    img = np.arange(1, 10, dtype=np.uint8).reshape(3, 3)
    assert_array_equal(mmimage.imshear(img, 0), img)
    assert_array_equal(mmimage.imshear(img, 1), [[1, 2, 3], [0, 4, 5], [0, 0, 7]])
    assert_array_equal(mmimage.imshear(img, -1, "vertical"), [[1, 5, 9], [4, 8, 0], [7, 0, 0]])
    assert_array_equal(
        mmimage.imtranslate(img, 1, border_value=128), [[128, 1, 2], [128, 4, 5], [128, 7, 8]]
    )
    assert_array_equal(mmimage.imtranslate(img, -1, "vertical"), [[4, 5, 6], [7, 8, 9], [0, 0, 0]])
    color = np.stack([img] * 3, axis=-1)
    shifted = mmimage.imtranslate(color, 2, "vertical", (110, 120, 130))
    assert (shifted[:2] == [110, 120, 130]).all()
    assert_array_equal(shifted[2], color[0])
    # A single int border fills every channel here (mmcv expands it before calling OpenCV).
    assert_array_equal(mmimage.imshear(color, 1, border_value=7)[2, 0], [7, 7, 7])


@pytest.mark.parametrize("function", [mmimage.imshear, mmimage.imtranslate])
def test_shear_translate_errors(bgr, function):
    with pytest.raises(AssertionError):
        function(bgr, 1, "diagonal")
    with pytest.raises(AssertionError):
        function(bgr, 1, "horizontal", (1, 2))
    with pytest.raises(ValueError):
        function(bgr, 1, "horizontal", [1, 2, 3])


def test_imshear_equals_warp_affine(bgr):
    sheared = mmimage.imshear(bgr, 0.3, "vertical", (1, 2, 3), "nearest")
    matrix = np.float32([[1, 0, 0], [0.3, 1, 0]])
    expected = cv2.warpAffine(bgr, matrix, (32, 24), borderValue=(1, 2, 3), flags=cv2.INTER_NEAREST)
    assert_array_equal(sheared, expected)
