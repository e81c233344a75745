"""Geometric transforms of mmcv 1.x: resize, rescale, flip, rotate, crop, pad, shear, translate.

Sizes passed to the resize functions are ``(w, h)`` as in OpenCV; shapes (``impad``'s
``shape``) are ``(h, w)``. Border and fill values are handed to OpenCV unchanged, so a single
number fills only the first channel of a colour image (OpenCV's ``Scalar(v, 0, 0, 0)``), exactly
as in mmcv; pass a tuple to fill every channel.
"""

from __future__ import annotations

import numbers
from typing import Any, Union

import cv2
import numpy as np
from PIL import Image

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.image.io import imread_backend as imread_backend

from ..utils import to_2tuple
from ..utils.compat_errors import CheckTypeError, CheckValueError
from ._errors import name_opencv_errors_of

cv2_interp_codes = {
    "nearest": cv2.INTER_NEAREST,
    "bilinear": cv2.INTER_LINEAR,
    "bicubic": cv2.INTER_CUBIC,
    "area": cv2.INTER_AREA,
    "lanczos": cv2.INTER_LANCZOS4,
}

cv2_border_modes = {
    "constant": cv2.BORDER_CONSTANT,
    "replicate": cv2.BORDER_REPLICATE,
    "reflect": cv2.BORDER_REFLECT,
    "wrap": cv2.BORDER_WRAP,
    "reflect_101": cv2.BORDER_REFLECT_101,
    "transparent": cv2.BORDER_TRANSPARENT,
    "isolated": cv2.BORDER_ISOLATED,
}

# Pillow 9.1 moved the filters to ``Image.Resampling``; older releases keep them on ``Image``.
_resampling = getattr(Image, "Resampling", Image)
pillow_interp_codes = {
    "nearest": _resampling.NEAREST,
    "bilinear": _resampling.BILINEAR,
    "bicubic": _resampling.BICUBIC,
    "box": _resampling.BOX,
    "lanczos": _resampling.LANCZOS,
    "hamming": _resampling.HAMMING,
}

# ``padding_mode`` of :func:`impad` (numpy's names) -> OpenCV border type.
_PAD_BORDERS = {
    "constant": cv2.BORDER_CONSTANT,
    "edge": cv2.BORDER_REPLICATE,
    "reflect": cv2.BORDER_REFLECT_101,
    "symmetric": cv2.BORDER_REFLECT,
}

# ``backend=None`` means OpenCV. mmcv documents that None follows ``use_backend()``, but its
# transforms read the decoding backend once, at import, so they always resize with OpenCV;
# projects rely on that (mmaction2 decodes with turbojpeg, then resizes with backend=None).
_DEFAULT_BACKEND = "cv2"
_RESIZE_BACKENDS = ("cv2", "pillow")

ImageSize = tuple[int, int]
ResizeResult = Union[np.ndarray, tuple[np.ndarray, float, float]]


def _scale_size(size: ImageSize, scale: Union[float, int, tuple]) -> ImageSize:
    """Scale ``(w, h)`` by a factor (or a ``(w, h)`` pair of factors), rounding half up."""
    w_factor, h_factor = (scale, scale) if isinstance(scale, (float, int)) else scale
    w, h = size
    return int(w * float(w_factor) + 0.5), int(h * float(h_factor) + 0.5)


def _resize_backend(backend: str | None) -> str:
    backend = _DEFAULT_BACKEND if backend is None else backend
    if backend not in _RESIZE_BACKENDS:
        raise ValueError(
            f"backend {backend!r} is not supported for resizing; use one of {_RESIZE_BACKENDS}"
        )
    return backend


class ImageSizeError(ValueError, cv2.error):
    """A target size (or an image) that cannot be resized to or from: not positive.

    A ``ValueError`` naming the size, and a ``cv2.error`` as OpenCV raised under mmcv.
    """


def _check_resize(img: np.ndarray, size: Any) -> None:
    """Raise one clear error for a target ``size`` or an ``img`` no resize can handle."""
    if not isinstance(img, np.ndarray):
        raise TypeError(f"imresize: img must be a numpy array, not {type(img).__name__}")
    if img.ndim not in (2, 3) or img.shape[0] < 1 or img.shape[1] < 1:
        raise ImageSizeError(
            f"imresize: the image has shape {img.shape}; it needs a height and width of at "
            f"least 1 (an (h, w) or (h, w, c) array)"
        )
    try:
        w, h = size
        ok = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (w, h))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise TypeError(f"imresize: size must be a (w, h) pair of ints, not {size!r}")
    if w < 1 or h < 1:
        raise ImageSizeError(
            f"imresize: cannot resize to size (w, h) = {tuple(size)}: both must be at least 1"
        )


def imresize(
    img: np.ndarray,
    size: ImageSize,
    return_scale: bool = False,
    interpolation: str = "bilinear",
    out: np.ndarray | None = None,
    backend: str | None = None,
) -> ResizeResult:
    """Resize an image to ``size``.

    Args:
        img: The image.
        size: Target size ``(w, h)``.
        return_scale: Also return the factors ``w_scale`` and ``h_scale``.
        interpolation: A key of ``cv2_interp_codes`` (OpenCV) or ``pillow_interp_codes``.
        out: Output array for OpenCV to write into.
        backend: ``'cv2'``, ``'pillow'`` (uint8 only) or None (OpenCV).

    Returns:
        The resized image, or ``(resized, w_scale, h_scale)``.

    Raises:
        ImageSizeError: A width or height of ``size`` (or of ``img``) below 1: a
            ``ValueError`` naming it (and a ``cv2.error``, as mmcv's OpenCV raised).
        TypeError: ``img`` is not an array, or ``size`` not a pair of ints.
        ValueError: Unknown backend.
        KeyError: Unknown interpolation for the backend.
    """
    _check_resize(img, size)
    h, w = img.shape[:2]
    backend = _resize_backend(backend)
    if backend == "pillow":
        if not (img.dtype == np.uint8):
            raise CheckTypeError("the pillow backend resizes uint8 images only")
        resampling = pillow_interp_codes[interpolation]
        resized = np.array(Image.fromarray(img).resize(size, resampling))
    else:
        resized = cv2.resize(img, size, dst=out, interpolation=cv2_interp_codes[interpolation])
    if return_scale:
        return resized, size[0] / w, size[1] / h
    return resized


def imresize_to_multiple(
    img: np.ndarray,
    divisor: Union[int, tuple[int, int]],
    size: Union[int, tuple[int, int], None] = None,
    scale_factor: Union[float, tuple[float, float], None] = None,
    keep_ratio: bool = False,
    return_scale: bool = False,
    interpolation: str = "bilinear",
    out: np.ndarray | None = None,
    backend: str | None = None,
) -> ResizeResult:
    """Resize to ``size`` or by ``scale_factor``, then round each side up to a multiple.

    Args:
        img: The image.
        divisor: The sides become multiples of it; ``(w_divisor, h_divisor)`` for two values.
        size: Target size ``(w, h)`` (an int for both sides).
        scale_factor: Factor for both sides, or ``(w_factor, h_factor)``.
        keep_ratio: With ``size``, fit the image inside ``size`` keeping its aspect ratio.
        return_scale: Also return ``w_scale`` and ``h_scale``.
        interpolation: As :func:`imresize`.
        out: As :func:`imresize`.
        backend: As :func:`imresize`.

    Returns:
        The resized image, or ``(resized, w_scale, h_scale)``.

    Raises:
        ValueError: Both or neither of ``size`` and ``scale_factor`` are given.
    """
    h, w = img.shape[:2]
    if size is not None and scale_factor is not None:
        raise ValueError("give only one of size and scale_factor")
    if size is None and scale_factor is None:
        raise ValueError("give one of size and scale_factor")
    if size is not None:
        target = to_2tuple(size)
        if keep_ratio:
            target = rescale_size((w, h), target, return_scale=False)
    else:
        target = _scale_size((w, h), scale_factor)
    divisors = to_2tuple(divisor)
    target = tuple(int(np.ceil(side / d)) * d for side, d in zip(target, divisors))
    resized, w_scale, h_scale = imresize(
        img, target, return_scale=True, interpolation=interpolation, out=out, backend=backend
    )
    if return_scale:
        return resized, w_scale, h_scale
    return resized


def imresize_like(
    img: np.ndarray,
    dst_img: np.ndarray,
    return_scale: bool = False,
    interpolation: str = "bilinear",
    backend: str | None = None,
) -> ResizeResult:
    """Resize ``img`` to the height and width of ``dst_img``.

    Args:
        img: The image.
        dst_img: The image whose size to take.
        return_scale: Also return ``w_scale`` and ``h_scale``.
        interpolation: As :func:`imresize`.
        backend: As :func:`imresize`.

    Returns:
        The resized image, or ``(resized, w_scale, h_scale)``.

    Raises:
        ImageSizeError: ``dst_img`` has a zero width or height (as :func:`imresize`).
    """
    h, w = dst_img.shape[:2]
    return imresize(img, (w, h), return_scale, interpolation, backend=backend)


def rescale_size(
    old_size: tuple, scale: Union[float, int, tuple], return_scale: bool = False
) -> Union[ImageSize, tuple[ImageSize, float]]:
    """Compute the size an image is rescaled to.

    A number scales both sides by it. A tuple ``(a, b)`` gives the largest size whose long side
    is at most ``max(a, b)`` and short side at most ``min(a, b)``, keeping the aspect ratio.

    Args:
        old_size: The image's size ``(w, h)``.
        scale: A positive factor, or a tuple of two edge limits.
        return_scale: Also return the factor used.

    Returns:
        The new size ``(w, h)``, or ``((w, h), factor)``.

    Raises:
        ValueError: The factor is not positive.
        TypeError: ``scale`` is neither a number nor a tuple.
    """
    w, h = old_size
    if min(w, h) < 1:
        raise ValueError(f"cannot rescale an image of size (w, h) = {(w, h)}: it is empty")
    if isinstance(scale, (float, int)):
        if scale <= 0:
            raise ValueError(f"the scale factor must be positive, but got {scale}")
        factor = scale
    elif isinstance(scale, tuple):
        long_edge, short_edge = max(scale), min(scale)
        factor = min(long_edge / max(h, w), short_edge / min(h, w))
    else:
        raise TypeError(f"scale must be a number or a tuple of ints, but got {type(scale)}")
    new_size = _scale_size((w, h), factor)
    return (new_size, factor) if return_scale else new_size


def imrescale(
    img: np.ndarray,
    scale: Union[float, tuple[int, int]],
    return_scale: bool = False,
    interpolation: str = "bilinear",
    backend: str | None = None,
) -> Union[np.ndarray, tuple[np.ndarray, float]]:
    """Resize an image keeping its aspect ratio (the size rule is :func:`rescale_size`'s).

    Args:
        img: The image.
        scale: A factor, or a tuple of two edge limits.
        return_scale: Also return the factor used.
        interpolation: As :func:`imresize`.
        backend: As :func:`imresize`.

    Returns:
        The rescaled image, or ``(rescaled, factor)``.

    Raises:
        ValueError: ``img`` is empty, or a scale factor is not positive (as :func:`rescale_size`).
        TypeError: ``scale`` is not a number or a tuple of ints.
    """
    h, w = img.shape[:2]
    new_size, factor = rescale_size((w, h), scale, return_scale=True)
    rescaled = imresize(img, new_size, interpolation=interpolation, backend=backend)
    return (rescaled, factor) if return_scale else rescaled


_FLIP_AXES = {"horizontal": 1, "vertical": 0, "diagonal": (0, 1)}
_CV2_FLIP_CODES = {"horizontal": 1, "vertical": 0, "diagonal": -1}


def imflip(img: np.ndarray, direction: str = "horizontal") -> np.ndarray:
    """Flip an image (a view, no copy).

    Args:
        img: The image.
        direction: ``'horizontal'``, ``'vertical'`` or ``'diagonal'`` (both).

    Returns:
        The flipped image.

    Raises:
        CheckValueError: ``direction`` is not ``'horizontal'``, ``'vertical'`` or ``'diagonal'``
            (a ``ValueError`` and ``AssertionError``).
    """
    if direction not in _FLIP_AXES:
        raise CheckValueError(f"unknown flip direction {direction!r}")
    return np.flip(img, axis=_FLIP_AXES[direction])


def imflip_(img: np.ndarray, direction: str = "horizontal") -> np.ndarray:
    """Flip an image in place.

    Args:
        img: The image (overwritten).
        direction: ``'horizontal'``, ``'vertical'`` or ``'diagonal'`` (both).

    Returns:
        ``img``, flipped.

    Raises:
        CheckValueError: ``direction`` is not ``'horizontal'``, ``'vertical'`` or ``'diagonal'``
            (a ``ValueError`` and ``AssertionError``).
    """
    if direction not in _CV2_FLIP_CODES:
        raise CheckValueError(f"unknown flip direction {direction!r}")
    return cv2.flip(img, _CV2_FLIP_CODES[direction], img)


def imrotate(
    img: np.ndarray,
    angle: float,
    center: tuple[float, float] | None = None,
    scale: float = 1.0,
    border_value: int = 0,
    interpolation: str = "bilinear",
    auto_bound: bool = False,
    border_mode: str = "constant",
) -> np.ndarray:
    """Rotate an image clockwise by ``angle`` degrees.

    Args:
        img: The image.
        angle: Degrees; positive is clockwise.
        center: Rotation centre ``(x, y)``; default the image centre ``((w-1)/2, (h-1)/2)``.
        scale: Isotropic scale factor.
        border_value: Fill value for the constant border.
        interpolation: A key of ``cv2_interp_codes``.
        auto_bound: Enlarge the output so that the whole rotated image fits.
        border_mode: A key of ``cv2_border_modes``.

    Returns:
        The rotated image.

    Raises:
        ValueError: ``center`` and ``auto_bound`` are both given.
    """
    if center is not None and auto_bound:
        raise ValueError("auto_bound rotates about the image centre; do not also give center")
    h, w = img.shape[:2]
    if center is None:
        center = ((w - 1) * 0.5, (h - 1) * 0.5)
    if not (isinstance(center, tuple)):
        raise CheckTypeError(f"center must be a tuple, but got {type(center)}")
    # OpenCV's angle is counter-clockwise.
    matrix = cv2.getRotationMatrix2D(center, -angle, scale)
    if auto_bound:
        cos, sin = np.abs(matrix[0, 0]), np.abs(matrix[0, 1])
        bound_w = h * sin + w * cos
        bound_h = h * cos + w * sin
        matrix[0, 2] += (bound_w - w) * 0.5
        matrix[1, 2] += (bound_h - h) * 0.5
        w, h = int(np.round(bound_w)), int(np.round(bound_h))
    return cv2.warpAffine(
        img,
        matrix,
        (w, h),
        flags=cv2_interp_codes[interpolation],
        borderMode=cv2_border_modes[border_mode],
        borderValue=border_value,
    )


def bbox_clip(bboxes: np.ndarray, img_shape: tuple[int, int]) -> np.ndarray:
    """Clip boxes ``(x1, y1, x2, y2, ...)`` to an image of shape ``(h, w)`` (inclusive pixels).

    Args:
        bboxes: Shape ``(..., 4 * k)``.
        img_shape: ``(h, w)`` (further entries are ignored).

    Returns:
        The clipped boxes, same dtype.
    """
    if not (bboxes.shape[-1] % 4 == 0):
        raise CheckValueError(f"the last axis must hold 4*k values: {bboxes.shape}")
    upper = np.empty(bboxes.shape[-1], dtype=bboxes.dtype)
    upper[0::2] = img_shape[1] - 1
    upper[1::2] = img_shape[0] - 1
    return np.maximum(np.minimum(bboxes, upper), 0)


def bbox_scaling(
    bboxes: np.ndarray, scale: float, clip_shape: tuple[int, int] | None = None
) -> np.ndarray:
    """Scale boxes about their centres (sizes counted in inclusive pixels, ``x2 - x1 + 1``).

    Args:
        bboxes: Shape ``(..., 4)``.
        scale: Scale factor.
        clip_shape: If given, clip the result to an image of this ``(h, w)``.

    Returns:
        The scaled boxes.
    """
    if float(scale) == 1.0:
        scaled = bboxes.copy()
    else:
        half_dw = (bboxes[..., 2] - bboxes[..., 0] + 1) * (scale - 1) * 0.5
        half_dh = (bboxes[..., 3] - bboxes[..., 1] + 1) * (scale - 1) * 0.5
        scaled = bboxes + np.stack((-half_dw, -half_dh, half_dw, half_dh), axis=-1)
    return scaled if clip_shape is None else bbox_clip(scaled, clip_shape)


def imcrop(
    img: np.ndarray,
    bboxes: np.ndarray,
    scale: float = 1.0,
    pad_fill: Union[float, list, None] = None,
) -> Union[np.ndarray, list[np.ndarray]]:
    """Crop patches: scale the boxes, clip them to the image, crop (and pad).

    Args:
        img: The image.
        bboxes: Boxes ``(x1, y1, x2, y2)`` (inclusive), shape ``(k, 4)`` or ``(4,)``.
        scale: Scale the boxes about their centres first.
        pad_fill: None to crop only the part inside the image; a number (every channel) or one
            value per channel to return full-size patches with the outside filled.

    Returns:
        One patch for a ``(4,)`` box, else a list of patches.

    Raises:
        CheckValueError: ``bboxes``' last axis is not a multiple of 4, or ``pad_fill`` does not
            give one value per channel (a ``ValueError`` and ``AssertionError``).
    """
    channels = 1 if img.ndim == 2 else img.shape[2]
    if pad_fill is not None:
        if isinstance(pad_fill, (int, float)):
            pad_fill = [pad_fill] * channels
        if not (len(pad_fill) == channels):
            raise CheckValueError(f"pad_fill needs {channels} values: {pad_fill}")
    boxes = bboxes[None, ...] if bboxes.ndim == 1 else bboxes
    scaled = bbox_scaling(boxes, scale).astype(np.int32)
    clipped = bbox_clip(scaled, img.shape)

    patches = []
    for (x1, y1, x2, y2), (sx1, sy1, sx2, sy2) in zip(clipped, scaled):
        if pad_fill is None:
            patches.append(img[y1 : y2 + 1, x1 : x2 + 1, ...])
            continue
        shape = (sy2 - sy1 + 1, sx2 - sx1 + 1) + (() if channels == 1 else (channels,))
        patch = np.array(pad_fill, dtype=img.dtype) * np.ones(shape, dtype=img.dtype)
        top, left = max(-sy1, 0), max(-sx1, 0)
        h, w = y2 - y1 + 1, x2 - x1 + 1
        patch[top : top + h, left : left + w, ...] = img[y1 : y1 + h, x1 : x1 + w, ...]
        patches.append(patch)
    return patches[0] if bboxes.ndim == 1 else patches


def impad(
    img: np.ndarray,
    *,
    shape: tuple[int, int] | None = None,
    padding: Union[int, tuple, None] = None,
    pad_val: Union[float, list] = 0,
    padding_mode: str = "constant",
) -> np.ndarray:
    """Pad an image to ``shape`` (bottom and right) or by ``padding`` on each side.

    Args:
        img: The image.
        shape: Target shape ``(h, w)``; exclusive with ``padding``.
        padding: An int for every side, ``(left/right, top/bottom)``, or
            ``(left, top, right, bottom)``.
        pad_val: Fill value of the ``'constant'`` mode: a number, or a tuple with one value per
            channel.
        padding_mode: ``'constant'``, ``'edge'``, ``'reflect'`` (without repeating the edge
            value) or ``'symmetric'`` (repeating it).

    Returns:
        The padded image.

    Raises:
        AssertionError: Both or neither of ``shape`` and ``padding``; a tuple ``pad_val`` of the
            wrong length; an unknown ``padding_mode``.
        TypeError: ``pad_val`` is neither a number nor a tuple.
        ValueError: ``padding`` is not an int or a 2- or 4-tuple, or is negative; ``img`` is
            not an ``(h, w)`` or ``(h, w, c)`` array, or one OpenCV cannot pad
            (:class:`~mmpar.image._errors.ImageOpError`). An empty result is an empty array.
    """
    if not ((shape is not None) ^ (padding is not None)):
        raise CheckValueError("give exactly one of shape and padding")
    if shape is not None:
        padding = (0, 0, max(shape[1] - img.shape[1], 0), max(shape[0] - img.shape[0], 0))

    if isinstance(pad_val, tuple):
        assert len(pad_val) == img.shape[-1], (
            f"pad_val {pad_val} needs one value per channel ({img.shape[-1]})"
        )
    elif not isinstance(pad_val, numbers.Number):
        raise TypeError(f"pad_val must be a number or a tuple, but got {type(pad_val)}")

    if isinstance(padding, tuple) and len(padding) in (2, 4):
        left, top, right, bottom = padding * 2 if len(padding) == 2 else padding
    elif isinstance(padding, numbers.Number):
        left = top = right = bottom = padding
    else:
        raise ValueError(f"padding must be an int or a 2- or 4-element tuple, but got {padding}")

    if padding_mode not in _PAD_BORDERS:
        raise CheckValueError(f"unknown padding_mode {padding_mode!r}")
    if min(left, top, right, bottom) < 0:
        raise ValueError(f"impad: padding must not be negative, but got {padding}")
    out = cv2.copyMakeBorder(
        img, top, bottom, left, right, _PAD_BORDERS[padding_mode], value=pad_val
    )
    if out is None:  # OpenCV returns None when the result is empty
        h, w = img.shape[0] + top + bottom, img.shape[1] + left + right
        out = np.zeros((h, w, *img.shape[2:]), img.dtype)
    return out


def impad_to_multiple(img: np.ndarray, divisor: int, pad_val: Union[float, list] = 0) -> np.ndarray:
    """Pad the bottom and right so that height and width are multiples of ``divisor``.

    Args:
        img: The image.
        divisor: The sides become multiples of it.
        pad_val: As :func:`impad`.

    Returns:
        The padded image.

    Raises:
        ZeroDivisionError: ``divisor`` is 0 (a negative one is not checked, as in mmcv).
    """
    pad_h = int(np.ceil(img.shape[0] / divisor)) * divisor
    pad_w = int(np.ceil(img.shape[1] / divisor)) * divisor
    return impad(img, shape=(pad_h, pad_w), pad_val=pad_val)


def _channels(img: np.ndarray) -> int:
    return 1 if img.ndim == 2 else img.shape[-1]


def _per_channel(value: Any, channels: int, name: str, invalid: type) -> tuple:
    """Expand an int to one value per channel; check a tuple's length."""
    if isinstance(value, int):
        return (value,) * channels
    if isinstance(value, tuple):
        assert len(value) == channels, (
            f"{name} has {len(value)} values but the image has {channels} channels"
        )
        return value
    raise invalid(f"{name} must be an int or a tuple, but got {type(value)}")


def cutout(
    img: np.ndarray, shape: Union[int, tuple[int, int]], pad_val: Union[int, float, tuple] = 0
) -> np.ndarray:
    """Fill a rectangle at a random place (numpy's global RNG) with ``pad_val``.

    Args:
        img: The image (not modified).
        shape: Rectangle ``(h, w)``, or an int for a square.
        pad_val: Fill value: a number, or one value per channel.

    Returns:
        A copy of ``img`` with the rectangle filled (cut at the image border).

    Raises:
        TypeError: ``pad_val`` is neither a number nor a tuple.
    """
    channels = _channels(img)
    if isinstance(shape, int):
        cut_h = cut_w = shape
    else:
        assert isinstance(shape, tuple) and len(shape) == 2, (
            f"shape must be an int or a tuple of 2 ints, but got {shape!r}"
        )
        cut_h, cut_w = shape
    if isinstance(pad_val, (int, float)):
        pad_val = (pad_val,) * channels
    elif isinstance(pad_val, tuple):
        assert len(pad_val) == channels, (
            f"pad_val has {len(pad_val)} values but the image has {channels} channels"
        )
    else:
        raise TypeError(f"pad_val must be a number or a tuple, but got {type(pad_val)}")

    img_h, img_w = img.shape[:2]
    # The draws are mmcv's, in its order (low=img_h, high=1.0), so seeded pipelines cut the
    # same rectangle.
    y_centre = np.random.uniform(img_h)
    x_centre = np.random.uniform(img_w)
    y1 = int(max(0, y_centre - cut_h / 2.0))
    x1 = int(max(0, x_centre - cut_w / 2.0))
    y2 = min(img_h, y1 + cut_h)
    x2 = min(img_w, x1 + cut_w)

    result = img.copy()
    patch_shape = (y2 - y1, x2 - x1) + (() if img.ndim == 2 else (channels,))
    result[y1:y2, x1:x2, ...] = np.array(pad_val, dtype=img.dtype) * np.ones(
        patch_shape, dtype=img.dtype
    )
    return result


def _warp_along(
    img: np.ndarray,
    direction: str,
    matrices: tuple[list, list],
    border_value: Union[int, tuple],
    interpolation: str,
) -> np.ndarray:
    """Warp ``img`` into its own size by the affine matrix (horizontal, vertical) of ``direction``.

    Raises:
        ValueError: ``border_value`` is neither an int nor a tuple.
    """
    if direction not in ("horizontal", "vertical"):
        raise CheckValueError(f"invalid direction {direction!r}")
    border = _per_channel(border_value, _channels(img), "border_value", ValueError)
    matrix = np.float32(matrices[0] if direction == "horizontal" else matrices[1])
    height, width = img.shape[:2]
    # OpenCV takes at most 4 border values (a Scalar); masks with more channels use the first 3.
    return cv2.warpAffine(
        img,
        matrix,
        (width, height),
        borderValue=border[:3],
        flags=cv2_interp_codes[interpolation],
    )


def imshear(
    img: np.ndarray,
    magnitude: Union[int, float],
    direction: str = "horizontal",
    border_value: Union[int, tuple[int, int]] = 0,
    interpolation: str = "bilinear",
) -> np.ndarray:
    """Shear an image (output has the input's size).

    Args:
        img: Image ``(h, w)`` or ``(h, w, c)``.
        magnitude: Shear factor.
        direction: ``'horizontal'`` (x += magnitude * y) or ``'vertical'``.
        border_value: Fill value: an int, or one value per channel.
        interpolation: A key of ``cv2_interp_codes``.

    Returns:
        The sheared image.

    Raises:
        ValueError: ``border_value`` is neither an int nor a tuple.
    """
    matrices = ([[1, magnitude, 0], [0, 1, 0]], [[1, 0, 0], [magnitude, 1, 0]])
    return _warp_along(img, direction, matrices, border_value, interpolation)


def imtranslate(
    img: np.ndarray,
    offset: Union[int, float],
    direction: str = "horizontal",
    border_value: Union[int, tuple] = 0,
    interpolation: str = "bilinear",
) -> np.ndarray:
    """Shift an image by ``offset`` pixels (output has the input's size).

    Args:
        img: Image ``(h, w)`` or ``(h, w, c)``.
        offset: Pixels; positive moves right (horizontal) or down (vertical).
        direction: ``'horizontal'`` or ``'vertical'``.
        border_value: Fill value: an int, or one value per channel.
        interpolation: A key of ``cv2_interp_codes``.

    Returns:
        The shifted image.

    Raises:
        ValueError: ``border_value`` is neither an int nor a tuple.
    """
    matrices = ([[1, 0, offset], [0, 1, 0]], [[1, 0, 0], [0, 1, offset]])
    return _warp_along(img, direction, matrices, border_value, interpolation)


# Last: an error from inside OpenCV names the function and the image (see _errors).
name_opencv_errors_of(globals())
