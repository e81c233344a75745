"""Photometric transforms of mmcv 1.x; images are BGR unless noted.

Normalisation, colour/brightness/contrast/hue changes, histogram operations,
posterize/solarize and look-up tables.

The OpenCV calls (``cv2.subtract``/``cv2.multiply``/``cv2.addWeighted``) are mmcv's, so the
float32 results are the same to the bit.
"""

from __future__ import annotations

import warnings
from typing import Callable, Union

import cv2
import numpy as np
from PIL import Image, ImageEnhance

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.image.io import imread_backend as imread_backend

from ..utils import is_tuple_of
from ..utils.compat_errors import CheckTypeError, CheckValueError
from ._errors import name_opencv_errors_of
from .colorspace import bgr2gray, gray2bgr

# As in geometric.py: ``backend=None`` means OpenCV (mmcv's transforms never follow
# ``use_backend()``, which selects the decoder only).
_DEFAULT_BACKEND = "cv2"
_BACKENDS = ("cv2", "pillow")


def _backend(backend: str | None) -> str:
    backend = _DEFAULT_BACKEND if backend is None else backend
    if backend not in _BACKENDS:
        raise ValueError(f"backend {backend!r} is not supported; use one of {_BACKENDS}")
    return backend


def imnormalize(
    img: np.ndarray, mean: np.ndarray, std: np.ndarray, to_rgb: bool = True
) -> np.ndarray:
    """Return ``(img - mean) / std`` as a new float32 image.

    Args:
        img: The image (any dtype; converted to float32).
        mean: Per-channel mean (in the output channel order).
        std: Per-channel standard deviation.
        to_rgb: Convert BGR to RGB before normalising.

    Returns:
        The normalised float32 image.
    """
    # A C-ordered copy: OpenCV refuses strided arrays (e.g. an HWC view of CHW data, as
    # mmcls's CIFAR10 yields), and ``astype`` alone keeps the input's strides.
    return imnormalize_(img.astype(np.float32, order="C"), mean, std, to_rgb)


def imnormalize_(
    img: np.ndarray, mean: np.ndarray, std: np.ndarray, to_rgb: bool = True
) -> np.ndarray:
    """Normalise a float image in place: ``(img - mean) / std``.

    Args:
        img: A float image (overwritten; uint8 is refused).
        mean: Per-channel mean (in the output channel order).
        std: Per-channel standard deviation.
        to_rgb: Convert BGR to RGB before normalising.

    Returns:
        ``img``, normalised.

    Raises:
        CheckTypeError: ``img`` is uint8, which cannot hold the normalized values in place (a
            ``TypeError`` and, as mmcv asserted, an ``AssertionError``).
    """
    if not (img.dtype != np.uint8):
        raise CheckTypeError("imnormalize_ works in place, so img must not be uint8")
    mean = np.float64(mean.reshape(1, -1))
    inv_std = 1 / np.float64(std.reshape(1, -1))
    if to_rgb:
        cv2.cvtColor(img, cv2.COLOR_BGR2RGB, img)
    cv2.subtract(img, mean, img)
    cv2.multiply(img, inv_std, img)
    return img


def imdenormalize(
    img: np.ndarray, mean: np.ndarray, std: np.ndarray, to_bgr: bool = True
) -> np.ndarray:
    """Undo :func:`imnormalize`: return ``img * std + mean`` as a new image.

    Args:
        img: A normalised float image.
        mean: Per-channel mean used to normalise.
        std: Per-channel standard deviation used to normalise.
        to_bgr: Convert RGB back to BGR afterwards.

    Returns:
        The de-normalised image (float).

    Raises:
        CheckTypeError: ``img`` is not a float image (a ``TypeError`` and ``AssertionError``).
    """
    if not (img.dtype != np.uint8):
        raise CheckTypeError("img must be a float image")
    mean = mean.reshape(1, -1).astype(np.float64)
    std = std.reshape(1, -1).astype(np.float64)
    out = cv2.multiply(img, std)
    cv2.add(out, mean, out)
    if to_bgr:
        cv2.cvtColor(out, cv2.COLOR_RGB2BGR, out)
    return out


def iminvert(img: np.ndarray) -> np.ndarray:
    """Return ``255 - img``.

    Args:
        img: The image.

    Returns:
        The inverted image.

    Raises:
        TypeError: An integer or bool dtype that cannot hold 255 (``int8``, ``bool``).
    """
    _check_holds_255(img, "iminvert")
    return np.full_like(img, 255) - img


def _check_holds_255(img: np.ndarray, op: str) -> None:
    """Refuse a dtype in which ``255 - value`` overflows or is undefined (int8, bool)."""
    if img.dtype == np.bool_ or (img.dtype.kind in "iu" and np.iinfo(img.dtype).max < 255):
        raise CheckTypeError(
            f"{op}: a {img.dtype} image cannot hold 255 - value; convert it to uint8 or a "
            "float dtype first"
        )


def solarize(img: np.ndarray, thr: int = 128) -> np.ndarray:
    """Invert the pixel values at or above ``thr``.

    Args:
        img: The image.
        thr: Threshold (0-255).

    Returns:
        The solarized image.

    Raises:
        TypeError: An integer or bool dtype that cannot hold 255 (``int8``, ``bool``).
    """
    _check_holds_255(img, "solarize")
    return np.where(img < thr, img, 255 - img)


def posterize(img: np.ndarray, bits: int) -> np.ndarray:
    """Keep only the ``bits`` most significant bits of each value.

    Args:
        img: An integer image.
        bits: Bits to keep (1 to 8).

    Returns:
        The posterized image.

    Raises:
        TypeError: ``bits`` is not an int (numpy's shift refuses it).
    """
    shift = 8 - bits
    return np.left_shift(np.right_shift(img, shift), shift)


def _pillow_enhance(img: np.ndarray, enhancer: Callable, factor: float) -> np.ndarray:
    """Apply a PIL ``ImageEnhance`` class to a BGR uint8 image."""
    if not (img.dtype == np.uint8):
        raise CheckTypeError("the pillow backend works on uint8 images only")
    rgb = Image.fromarray(np.ascontiguousarray(img[..., ::-1]))
    return np.array(enhancer(rgb).enhance(factor), dtype=img.dtype)[..., ::-1]


def _blend_float(img: np.ndarray, factor: float, degenerated: np.ndarray) -> np.ndarray:
    """``img * factor + degenerated * (1 - factor)`` in float32, clipped to [0, 255]."""
    blended = cv2.addWeighted(
        img.astype(np.float32), factor, degenerated.astype(np.float32), 1 - factor, 0
    )
    return np.clip(blended, 0, 255).astype(img.dtype)


def adjust_color(
    img: np.ndarray,
    alpha: Union[int, float] = 1,
    beta: Union[int, float, None] = None,
    gamma: Union[int, float] = 0,
    backend: str | None = None,
) -> np.ndarray:
    """Blend a BGR image with its grayscale version: ``img * alpha + gray * beta + gamma``.

    Args:
        img: The BGR image.
        alpha: Weight of the image.
        beta: Weight of the gray image; None for ``1 - alpha``.
        gamma: Added to the sum.
        backend: ``'cv2'``, ``'pillow'`` (uint8; uses ``alpha`` only) or None (OpenCV).

    Returns:
        The image, same size and dtype.

    Raises:
        ValueError: Unknown backend.
    """
    if _backend(backend) == "pillow":
        warnings.warn("the pillow backend of adjust_color uses alpha only", stacklevel=2)
        return _pillow_enhance(img, ImageEnhance.Color, alpha)
    gray = np.tile(bgr2gray(img)[..., None], [1, 1, 3])
    if beta is None:
        beta = 1 - alpha
    colored = cv2.addWeighted(img, alpha, gray, beta, gamma)
    if colored.dtype != np.uint8:
        colored = np.clip(colored, 0, 255)
    return colored.astype(img.dtype)


def _equalize_channel(channel: np.ndarray) -> np.ndarray:
    # PIL's ImageOps.equalize: spread the histogram over 256 steps, leaving the last bin out.
    histogram = np.histogram(channel, 256, (0, 255))[0]
    used = histogram[histogram > 0]
    step = (np.sum(used) - used[-1]) // 255
    if not step:
        return channel
    lut = (np.cumsum(histogram) + (step // 2)) // step
    lut = np.concatenate([[0], lut[:-1]], 0)
    lut[lut > 255] = 255
    return lut[channel]


def imequalize(img: np.ndarray) -> np.ndarray:
    """Equalise the histogram of each of the three channels (as PIL's ``ImageOps.equalize``).

    Args:
        img: A 3-channel uint8 image.

    Returns:
        The equalised image, same dtype.

    Raises:
        ValueError: ``img`` is not a non-empty ``(h, w, 3)`` array (a ``CheckValueError``, the
            ``AssertionError`` type too).
    """
    if img.ndim != 3 or img.shape[2] != 3 or img.size == 0:
        raise CheckValueError(
            f"imequalize: img must be a non-empty (h, w, 3) image, but it has shape {img.shape}"
        )
    channels = [_equalize_channel(img[:, :, c]) for c in range(3)]
    return np.stack(channels, axis=-1).astype(img.dtype)


def adjust_brightness(
    img: np.ndarray, factor: float = 1.0, backend: str | None = None
) -> np.ndarray:
    """Blend the image with black: 0 gives black, 1 the image, above 1 brighter.

    Args:
        img: The BGR image.
        factor: Blend factor.
        backend: ``'cv2'``, ``'pillow'`` (uint8) or None (OpenCV).

    Returns:
        The image, same dtype, values clipped to [0, 255].

    Raises:
        ValueError: Unknown backend.
    """
    if _backend(backend) == "pillow":
        return _pillow_enhance(img, ImageEnhance.Brightness, factor)
    return _blend_float(img, factor, np.zeros_like(img))


def adjust_contrast(img: np.ndarray, factor: float = 1.0, backend: str | None = None) -> np.ndarray:
    """Blend the image with its mean gray level: 0 gives flat gray, 1 the image.

    Arguments, result and errors as :func:`adjust_brightness`.

    Raises:
        ValueError: Unknown backend.
        CheckTypeError: The pillow backend with an image that is not uint8.
    """
    if _backend(backend) == "pillow":
        return _pillow_enhance(img, ImageEnhance.Contrast, factor)
    gray = bgr2gray(img)
    histogram = np.histogram(gray, 256, (0, 255))[0]
    mean = round(np.sum(gray) / np.sum(histogram))
    flat = gray2bgr((np.ones_like(img[..., 0]) * mean).astype(img.dtype))
    return _blend_float(img, factor, flat)


def _auto_contrast_channel(channel: np.ndarray, cutoff: tuple) -> np.ndarray:
    histogram = np.histogram(channel, 256, (0, 255))[0]
    cumulative = np.cumsum(histogram)
    total = cumulative[-1]
    cut_low = total * cutoff[0] // 100
    cut_high = total - total * cutoff[1] // 100
    cumulative = np.clip(cumulative, cut_low, cut_high) - cut_low
    kept = np.concatenate([[cumulative[0]], np.diff(cumulative)], 0)
    nonzero = np.nonzero(kept)[0]
    low, high = nonzero[0], nonzero[-1]
    if low >= high:
        return channel
    scale = 255.0 / (high - low)
    lut = np.clip(np.arange(256) * scale - low * scale, 0, 255)
    return lut[channel]


def auto_contrast(img: np.ndarray, cutoff: Union[int, float, tuple] = 0) -> np.ndarray:
    """Stretch each channel so its darkest kept value maps to 0 and its lightest to 255.

    Args:
        img: A 3-channel image (BGR).
        cutoff: Percent of the darkest and lightest pixels to ignore: one number for both or
            ``(low, high)``.

    Returns:
        The image, same dtype.

    Raises:
        AssertionError: ``cutoff`` is not a number or a tuple (as mmcv).
    """
    if isinstance(cutoff, (int, float)):
        cutoff = (cutoff, cutoff)
    else:
        assert isinstance(cutoff, tuple), (
            f"cutoff must be an int, a float or a tuple, but got {type(cutoff)}"
        )
    channels = [_auto_contrast_channel(img[:, :, c], cutoff) for c in range(3)]
    return np.stack(channels, axis=-1).astype(img.dtype)


def adjust_sharpness(
    img: np.ndarray, factor: float = 1.0, kernel: np.ndarray | None = None
) -> np.ndarray:
    """Blend the image with a smoothed copy: 0 blurs, 1 keeps, 2 sharpens.

    Args:
        img: The BGR image.
        factor: Blend factor.
        kernel: The 2-D smoothing kernel; default PIL's SMOOTH kernel (3x3, centre 5, sum 13).

    Returns:
        The image, same dtype, values clipped to [0, 255].

    Raises:
        CheckTypeError: ``kernel`` is not an ndarray (a ``TypeError`` and ``AssertionError``).
        CheckValueError: ``kernel`` is not 2-D (a ``ValueError`` and ``AssertionError``).
    """
    if kernel is None:
        kernel = np.array([[1.0, 1.0, 1.0], [1.0, 5.0, 1.0], [1.0, 1.0, 1.0]]) / 13
    if not (isinstance(kernel, np.ndarray)):
        raise CheckTypeError(f"kernel must be an ndarray, but got {type(kernel)}")
    if not (kernel.ndim == 2):
        raise CheckValueError(f"kernel must be 2-D, but it has {kernel.ndim} dimensions")
    return _blend_float(img, factor, cv2.filter2D(img, -1, kernel))


def adjust_lighting(
    img: np.ndarray,
    eigval: np.ndarray,
    eigvec: np.ndarray,
    alphastd: float = 0.1,
    to_rgb: bool = True,
) -> np.ndarray:
    """AlexNet's PCA lighting noise: add ``eigvec @ (alpha * eigval)`` to every pixel.

    ``alpha`` is drawn from ``N(0, alphastd)`` with numpy's global RNG (one draw per
    eigenvalue).

    Args:
        img: The BGR image.
        eigval: Eigenvalues of the pixel covariance, shape ``(n,)``.
        eigvec: Eigenvectors as columns, shape ``(3, n)``.
        alphastd: Standard deviation of ``alpha``.
        to_rgb: Convert the image to RGB first (the eigenvectors are in RGB order).

    Returns:
        The adjusted image (float64: the float32 image plus the float64 shift, as in mmcv).

    Raises:
        AssertionError: ``eigval`` / ``eigvec`` are not arrays of shapes ``(k,)`` and ``(3, k)``
            (as mmcv).
        CheckTypeError: ``alphastd`` is not a float (a ``TypeError`` and ``AssertionError``).
    """
    assert isinstance(eigval, np.ndarray) and isinstance(eigvec, np.ndarray), (
        f"eigval and eigvec must be ndarrays, but got {type(eigval)} and {type(eigvec)}"
    )
    assert eigval.ndim == 1 and eigvec.ndim == 2
    assert eigvec.shape == (3, eigval.shape[0])
    if not (isinstance(alphastd, float)):
        raise CheckTypeError(f"alphastd must be a float, but got {type(alphastd)}")
    img = img.astype(np.float32)
    if to_rgb:
        cv2.cvtColor(img, cv2.COLOR_BGR2RGB, img)
    alpha = np.random.normal(0, alphastd, eigval.shape[0])
    shift = (eigvec * alpha.reshape(1, -1) * eigval.reshape(1, -1)).sum(axis=1)
    return img + np.broadcast_to(shift.reshape(1, 1, 3), img.shape)


def lut_transform(img: np.ndarray, lut_table: np.ndarray) -> np.ndarray:
    """Replace each value ``v`` (0-255) by ``lut_table[v]`` (``cv2.LUT``).

    Args:
        img: Image with values in [0, 255].
        lut_table: Table of 256 entries.

    Returns:
        The transformed image (dtype of ``lut_table``).

    Raises:
        AssertionError: ``img`` or ``lut_table`` is not an ndarray (as mmcv).
        CheckValueError: ``img`` values outside ``[0, 255]`` or a ``lut_table`` not of shape
            ``(256,)`` (a ``ValueError`` and ``AssertionError``).
    """
    assert isinstance(img, np.ndarray)
    if not (0 <= np.min(img) and np.max(img) <= 255):
        raise CheckValueError("img values must lie in [0, 255]")
    assert isinstance(lut_table, np.ndarray)
    if not (lut_table.shape == (256,)):
        raise CheckValueError(f"lut_table must have shape (256,): {lut_table.shape}")
    return cv2.LUT(np.array(img, dtype=np.uint8), lut_table)


def clahe(
    img: np.ndarray, clip_limit: float = 40.0, tile_grid_size: tuple[int, int] = (8, 8)
) -> np.ndarray:
    """Contrast-limited adaptive histogram equalisation of a grayscale image (OpenCV's).

    Args:
        img: A 2-D image.
        clip_limit: Contrast limit.
        tile_grid_size: Tiles ``(columns, rows)`` the image is divided into.

    Returns:
        The equalised uint8 image.

    Raises:
        AssertionError: ``img`` is not an ndarray, ``clip_limit`` not a number or
            ``tile_grid_size`` not a pair of ints (as mmcv).
        CheckValueError: ``img`` is not 2-D (a ``ValueError`` and ``AssertionError``).
    """
    assert isinstance(img, np.ndarray)
    if not (img.ndim == 2):
        raise CheckValueError(f"clahe works on 2-D images, but got {img.ndim} dimensions")
    assert isinstance(clip_limit, (float, int))
    assert is_tuple_of(tile_grid_size, int)
    assert len(tile_grid_size) == 2
    return cv2.createCLAHE(clip_limit, tile_grid_size).apply(np.array(img, dtype=np.uint8))


def adjust_hue(img: np.ndarray, hue_factor: float, backend: str | None = None) -> np.ndarray:
    """Rotate the hue by ``hue_factor`` of a full turn (HSV with hue in 0-255).

    Args:
        img: The BGR image.
        hue_factor: In [-0.5, 0.5]; 0 keeps the image, +-0.5 gives the complementary colours.
        backend: ``'cv2'``, ``'pillow'`` (uint8) or None (OpenCV).

    Returns:
        The image, same dtype.

    Raises:
        ValueError: Unknown backend, or ``hue_factor`` outside [-0.5, 0.5].
        TypeError: ``img`` is not a 2-D or 3-D ndarray.
    """
    backend = _backend(backend)
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"hue_factor must lie in [-0.5, 0.5], but got {hue_factor}")
    if not (isinstance(img, np.ndarray) and img.ndim in (2, 3)):
        raise TypeError("img must be an ndarray with 2 or 3 dimensions")
    # A negative shift wraps around the uint8 hue circle (mmcv's ``np.uint8(hue_factor * 255)``
    # relied on a C cast for that; numpy 2 refuses to convert negative values).
    shift = np.uint8(int(hue_factor * 255) % 256)
    if backend == "pillow":
        if not (img.dtype == np.uint8):
            raise CheckTypeError("the pillow backend works on uint8 images only")
        rgb = Image.fromarray(np.ascontiguousarray(img[..., ::-1]))
        hue, sat, val = rgb.convert("HSV").split()
        hue = np.array(hue, dtype=np.uint8)
        with np.errstate(over="ignore"):
            hue += shift  # wraps around, as a hue should
        hsv = Image.merge("HSV", (Image.fromarray(hue), sat, val))
        return np.array(hsv.convert("RGB"), dtype=img.dtype)[..., ::-1]
    dtype = img.dtype
    hsv = cv2.cvtColor(img.astype(np.uint8), cv2.COLOR_BGR2HSV_FULL)
    hue, sat, val = cv2.split(hsv)
    hue = hue.astype(np.uint8)
    with np.errstate(over="ignore"):
        hue += shift
    return cv2.cvtColor(cv2.merge([hue, sat, val]), cv2.COLOR_HSV2BGR_FULL).astype(dtype)


# Last: an error from inside OpenCV names the function and the image (see _errors).
name_opencv_errors_of(globals())
