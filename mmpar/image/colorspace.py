"""Colour-space conversions of mmcv 1.x (BGR is the default channel order, as in OpenCV).

Most conversions are one ``cv2.cvtColor`` call. The YCbCr ones follow ITU-R BT.601 (studio
range, as Matlab's ``rgb2ycbcr``), which is not OpenCV's JPEG-style ``YCrCb``.
"""

from __future__ import annotations

from typing import Any, Callable

import cv2
import numpy as np

from ._errors import name_opencv_errors_of


def _cv2_code(src: str, dst: str) -> int:
    name = f"COLOR_{src.upper()}2{dst.upper()}"
    try:
        return getattr(cv2, name)
    except AttributeError:
        # mmcv lets the AttributeError of the getattr escape; keep the type, say what is missing.
        raise AttributeError(f"OpenCV has no conversion {name} (from {src!r} to {dst!r})") from None


def imconvert(img: np.ndarray, src: str, dst: str) -> np.ndarray:
    """Convert ``img`` between colour spaces with OpenCV.

    Args:
        img: The input image.
        src: Source colour space, e.g. ``'bgr'``, ``'rgb'``, ``'hsv'``.
        dst: Destination colour space.

    Returns:
        The converted image.

    Raises:
        AttributeError: OpenCV has no ``COLOR_<SRC>2<DST>`` code.
    """
    return cv2.cvtColor(img, _cv2_code(src, dst))


def _to_gray(img: np.ndarray, code: int, keepdim: bool) -> np.ndarray:
    gray = cv2.cvtColor(img, code)
    return gray[..., None] if keepdim else gray


def bgr2gray(img: np.ndarray, keepdim: bool = False) -> np.ndarray:
    """Convert a BGR image to grayscale.

    Args:
        img: The BGR image.
        keepdim: Keep a trailing channel axis of size 1 (shape ``(h, w, 1)``).

    Returns:
        The grayscale image, ``(h, w)`` or ``(h, w, 1)``.
    """
    return _to_gray(img, cv2.COLOR_BGR2GRAY, keepdim)


def rgb2gray(img: np.ndarray, keepdim: bool = False) -> np.ndarray:
    """Convert an RGB image to grayscale: :func:`bgr2gray` for RGB channel order."""
    return _to_gray(img, cv2.COLOR_RGB2GRAY, keepdim)


def _from_gray(img: np.ndarray, code: int) -> np.ndarray:
    if img.ndim == 2:
        img = img[..., None]
    return cv2.cvtColor(img, code)


def gray2bgr(img: np.ndarray) -> np.ndarray:
    """Convert a grayscale image (``(h, w)`` or ``(h, w, 1)``) to BGR.

    Args:
        img: The grayscale image.

    Returns:
        The 3-channel image.
    """
    return _from_gray(img, cv2.COLOR_GRAY2BGR)


def gray2rgb(img: np.ndarray) -> np.ndarray:
    """Convert a grayscale image to RGB: :func:`gray2bgr` for RGB channel order."""
    return _from_gray(img, cv2.COLOR_GRAY2RGB)


# ITU-R BT.601, inputs in [0, 1] (rows: R, G, B input weights; columns: Y, Cb, Cr).
_RGB_TO_YCBCR = np.array(
    [[65.481, -37.797, 112.0], [128.553, -74.203, -93.786], [24.966, 112.0, -18.214]]
)
_YCBCR_OFFSET = np.array([16, 128, 128])
# Its inverse, inputs in [0, 255] (rows: Y, Cb, Cr; columns: R, G, B), as Matlab's ycbcr2rgb.
_YCBCR_TO_RGB = np.array(
    [
        [0.00456621, 0.00456621, 0.00456621],
        [0, -0.00153632, 0.00791071],
        [0.00625893, -0.00318811, 0],
    ]
)
_YCBCR_TO_RGB_OFFSET = np.array([-222.921, 135.576, -276.836])
# BGR input reverses the rows of the forward matrix; BGR output the columns of the inverse.
_TO_YCBCR = {"rgb": _RGB_TO_YCBCR, "bgr": np.ascontiguousarray(_RGB_TO_YCBCR[::-1])}
_FROM_YCBCR = {
    "rgb": (_YCBCR_TO_RGB, _YCBCR_TO_RGB_OFFSET),
    "bgr": (np.ascontiguousarray(_YCBCR_TO_RGB[:, ::-1]), _YCBCR_TO_RGB_OFFSET[::-1].copy()),
}


def _unit_float(img: np.ndarray) -> np.ndarray:
    """Return ``img`` as float32 in [0, 1]; only uint8 and float32 inputs are accepted."""
    if img.dtype == np.uint8:
        return img.astype(np.float32) / np.float32(255.0)
    if img.dtype == np.float32:
        return img.astype(np.float32)
    raise TypeError(f"the image must be np.uint8 or np.float32, but it is {img.dtype}")


def _restore_type(img: np.ndarray, dtype: Any) -> np.ndarray:
    """``img`` is in [0, 255]: back to uint8 (rounded) or float32 in [0, 1]."""
    if dtype == np.uint8:
        # Clipped first: mmcv cast directly, so white could come back as 256 -> 0.
        return np.clip(img.round(), 0, 255).astype(np.uint8)
    if dtype == np.float32:
        return (img / 255.0).astype(np.float32)
    raise TypeError(f"the output type must be np.uint8 or np.float32, but it is {dtype}")


# mmcv's private names for the two helpers above; code written against mmcv imports them.
_convert_input_type_range = _unit_float
_convert_output_type_range = _restore_type


def _ycbcr_from(img: np.ndarray, y_only: bool, order: str) -> np.ndarray:
    dtype = img.dtype
    unit = _unit_float(img)
    matrix = _TO_YCBCR[order]
    if y_only:
        out = np.dot(unit, matrix[:, 0]) + 16.0
    else:
        out = np.matmul(unit, matrix) + _YCBCR_OFFSET
    return _restore_type(out, dtype)


def _ycbcr_to(img: np.ndarray, order: str) -> np.ndarray:
    dtype = img.dtype
    scaled = _unit_float(img) * 255
    matrix, offset = _FROM_YCBCR[order]
    return _restore_type(np.matmul(scaled, matrix) * 255.0 + offset, dtype)


def rgb2ycbcr(img: np.ndarray, y_only: bool = False) -> np.ndarray:
    """Convert an RGB image to YCbCr (ITU-R BT.601, as Matlab's ``rgb2ycbcr``).

    Args:
        img: uint8 in [0, 255] or float32 in [0, 1].
        y_only: Return only the Y channel, shape ``(h, w)``.

    Returns:
        The YCbCr image in the input's type and range.

    Raises:
        TypeError: ``img`` is neither uint8 nor float32.
    """
    return _ycbcr_from(img, y_only, "rgb")


def bgr2ycbcr(img: np.ndarray, y_only: bool = False) -> np.ndarray:
    """Convert a BGR image to YCbCr (ITU-R BT.601): :func:`rgb2ycbcr` for BGR channel order."""
    return _ycbcr_from(img, y_only, "bgr")


def ycbcr2rgb(img: np.ndarray) -> np.ndarray:
    """Convert a YCbCr image (ITU-R BT.601) to RGB, as Matlab's ``ycbcr2rgb``.

    Args:
        img: uint8 in [0, 255] or float32 in [0, 1].

    Returns:
        The RGB image in the input's type and range.

    Raises:
        TypeError: ``img`` is neither uint8 nor float32.
    """
    return _ycbcr_to(img, "rgb")


def ycbcr2bgr(img: np.ndarray) -> np.ndarray:
    """Convert a YCbCr image (ITU-R BT.601) to BGR: :func:`ycbcr2rgb` for BGR channel order."""
    return _ycbcr_to(img, "bgr")


def convert_color_factory(src: str, dst: str) -> Callable[[np.ndarray], np.ndarray]:
    """Return a function that converts an image from ``src`` to ``dst`` with OpenCV.

    Args:
        src: Source colour space, e.g. ``'bgr'``.
        dst: Destination colour space, e.g. ``'hsv'``.

    Returns:
        ``convert(img) -> ndarray``.

    Raises:
        AttributeError: OpenCV has no ``COLOR_<SRC>2<DST>`` code.
    """
    code = _cv2_code(src, dst)

    def convert(img: np.ndarray) -> np.ndarray:
        return cv2.cvtColor(img, code)

    convert.__name__ = f"{src.lower()}2{dst.lower()}"
    convert.__qualname__ = convert.__name__
    convert.__doc__ = (
        f"Convert a {src.upper()} image to {dst.upper()}.\n\n"
        f"Args:\n    img (ndarray): The {src.upper()} image.\n\n"
        f"Returns:\n    ndarray: The {dst.upper()} image.\n"
    )
    return convert


bgr2rgb = convert_color_factory("bgr", "rgb")
rgb2bgr = convert_color_factory("rgb", "bgr")
bgr2hsv = convert_color_factory("bgr", "hsv")
hsv2bgr = convert_color_factory("hsv", "bgr")
bgr2hls = convert_color_factory("bgr", "hls")
hls2bgr = convert_color_factory("hls", "bgr")


# Last: an error from inside OpenCV names the function and the image (see _errors).
name_opencv_errors_of(globals())
