"""Generated bad input to ``mmpar.image``: a valid result or one clear error, never garbage.

Each entry point gets images of odd shapes (empty, one pixel, 1 or 4 channels, 4-D), dtypes
(bool, int64, float16, NaN/inf), and bad sizes, factors, boxes and bytes. The contract
(docs/reliability.md): it returns an array whose shape follows from its input, or it raises a
``ValueError``, ``TypeError`` or ``KeyError`` (the types its docstring names); never another
error from inside OpenCV or PIL, never a hang. Examples are few and small: this is a net for
crashes, not a benchmark.
"""

import functools

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mmpar.image as mi

CLEAR_ERRORS = (ValueError, TypeError, KeyError)
PROPERTY = settings(
    max_examples=25,
    deadline=2000,
    derandomize=True,  # the same cases on every run: a failure reproduces
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

DTYPES = st.sampled_from(
    [np.uint8, np.int8, np.uint16, np.int16, np.int32, np.int64, np.float16, np.float32,
     np.float64, np.bool_]
)  # fmt: skip
SHAPES = st.one_of(
    hnp.array_shapes(min_dims=2, max_dims=2, min_side=0, max_side=5),
    st.tuples(st.integers(0, 5), st.integers(0, 5), st.sampled_from([0, 1, 2, 3, 4])),
    hnp.array_shapes(min_dims=0, max_dims=1, min_side=0, max_side=4),
    st.just((1, 2, 2, 3)),
)


@st.composite
def images(draw):
    dtype = np.dtype(draw(DTYPES))
    shape = draw(SHAPES)
    elements = None
    if dtype.kind == "f":
        elements = st.floats(allow_nan=True, allow_infinity=True, width=dtype.itemsize * 8)
    return draw(hnp.arrays(dtype, shape, elements=elements))


def _check(call):
    """Run ``call``: an ndarray (or tuple/list holding them) back, or one of CLEAR_ERRORS."""
    try:
        result = call()
    except CLEAR_ERRORS as err:
        assert str(err), f"{type(err).__name__} without a message"
        return None
    except cv2.error as err:  # an error from inside OpenCV that names nothing
        raise AssertionError(f"cv2.error escaped: {str(err)[:200]}") from None
    parts = result if isinstance(result, (tuple, list)) else (result,)
    assert isinstance(parts[0] if parts else np.empty(0), np.ndarray), type(result)
    return result


SIZES = st.tuples(st.integers(-3, 6), st.integers(-3, 6))


@PROPERTY
@given(img=images(), size=SIZES, backend=st.sampled_from(["cv2", "pillow"]))
def test_imresize(img, size, backend):
    out = _check(lambda: mi.imresize(img, size, backend=backend))
    if out is not None:
        assert out.shape[:2] == (size[1], size[0])


@PROPERTY
@given(img=images(), scale=st.one_of(st.floats(-2, 3), SIZES))
def test_imrescale(img, scale):
    _check(lambda: mi.imrescale(img, scale))


@PROPERTY
@given(img=images(), other=images())
def test_imresize_like(img, other):
    _check(lambda: mi.imresize_like(img, other))


@PROPERTY
@given(img=images(), direction=st.sampled_from(["horizontal", "vertical", "diagonal", "up"]))
def test_imflip(img, direction):
    out = _check(lambda: mi.imflip(img, direction))
    if out is not None:
        assert out.shape == img.shape


@PROPERTY
@given(img=images(), angle=st.floats(allow_nan=True, allow_infinity=True), bound=st.booleans())
def test_imrotate(img, angle, bound):
    _check(lambda: mi.imrotate(img, angle, auto_bound=bound))


@PROPERTY
@given(img=images(), padding=st.one_of(st.integers(-2, 3), st.tuples(*[st.integers(-2, 3)] * 4)))
def test_impad(img, padding):
    out = _check(lambda: mi.impad(img, padding=padding))
    if out is not None and isinstance(padding, int):
        assert out.shape[:2] == (img.shape[0] + 2 * padding, img.shape[1] + 2 * padding)


@PROPERTY
@given(
    img=images(),
    bboxes=hnp.arrays(
        np.float64,
        st.sampled_from([(4,), (0, 4), (2, 4), (3,)]),
        elements=st.floats(-10, 10) | st.sampled_from([np.nan, np.inf]),
    ),
)
def test_imcrop(img, bboxes):
    _check(lambda: mi.imcrop(img, bboxes))


@PROPERTY
@given(img=images(), std=st.sampled_from([0.0, 1.0, np.nan, -1.0]))
def test_imnormalize(img, std):
    mean = np.array([1.0, 2.0, 3.0])
    _check(lambda: mi.imnormalize(img, mean, np.array([std] * 3)))


@PROPERTY
@given(
    img=images(),
    convert=st.sampled_from(
        ["bgr2gray", "rgb2gray", "gray2bgr", "bgr2rgb", "bgr2hsv", "hsv2bgr", "bgr2ycbcr",
         "ycbcr2bgr"]
    ),
)  # fmt: skip
def test_colour_conversions(img, convert):
    _check(lambda: getattr(mi, convert)(img))


@PROPERTY
@given(
    img=images(),
    adjust=st.sampled_from(["adjust_brightness", "adjust_contrast", "adjust_sharpness"]),
    factor=st.floats(allow_nan=True, allow_infinity=True),
)
def test_photometric_factors(img, adjust, factor):
    _check(lambda: getattr(mi, adjust)(img, factor))


@PROPERTY
@given(img=images())
def test_equalize_invert_solarize(img):
    for fn in (mi.imequalize, mi.iminvert, lambda x: mi.solarize(x, 100)):
        _check(functools.partial(fn, img))


@PROPERTY
@given(content=st.binary(max_size=64), backend=st.sampled_from(["cv2", "pillow"]))
def test_imfrombytes_random_bytes(content, backend):
    # Not an image: None (OpenCV, as mmcv; mmpose checks for it) or one clear error.
    try:
        img = mi.imfrombytes(content, backend=backend)
    except CLEAR_ERRORS + (OSError,) as err:  # PIL's UnidentifiedImageError is an OSError
        assert str(err)
        return
    assert img is None or isinstance(img, np.ndarray)


@pytest.fixture(scope="module")
def png_bytes():
    ok, buf = cv2.imencode(".png", np.full((6, 5, 3), 9, np.uint8))
    assert ok
    return buf.tobytes()


@PROPERTY
@given(cut=st.integers(0, 200), backend=st.sampled_from(["cv2", "pillow"]))
def test_imread_of_a_cut_image_file_names_it(tmp_path, png_bytes, cut, backend):
    path = tmp_path / f"cut_{cut}.png"
    path.write_bytes(png_bytes[:cut])
    try:
        img = mi.imread(path, backend=backend)
    except (ValueError, OSError) as err:
        assert str(path) in str(err)
        return
    assert img.shape == (6, 5, 3)  # the whole file (or enough of it) was there


def test_imread_of_a_directory_names_it(tmp_path):
    # A path that cannot be read as a file (a permission-less file is readable by root).
    with pytest.raises((IsADirectoryError, PermissionError), match=str(tmp_path.name)):
        mi.imread(tmp_path)
