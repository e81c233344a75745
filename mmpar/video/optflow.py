"""Optical flow files and helpers of mmcv 1.x.

A flow map is a float32 array ``(h, w, 2)`` of ``(dx, dy)``. Unquantized it is stored as a
Middlebury ``.flo`` file (``PIEH``, width and height as int32, then the float32 values);
quantized, ``dx`` and ``dy`` become uint8 images joined into one (lossy, much smaller).
"""

from __future__ import annotations

import warnings
from typing import Any

import cv2
import numpy as np

from ..arraymisc import dequantize, quantize
from ..image import imread, imwrite
from ..utils import is_str

_FLO_MAGIC = b"PIEH"


def flowread(
    flow_or_path: np.ndarray | str,
    quantize: bool = False,
    concat_axis: int = 0,
    *args: Any,
    **kwargs: Any,
) -> np.ndarray:
    """Read a flow map from a ``.flo`` file or a quantized image; an array is returned as is.

    Args:
        flow_or_path: A flow array ``(h, w, 2)`` or a file path.
        quantize: The file is a quantized image (see :func:`flowwrite`); the remaining
            arguments go to :func:`dequantize_flow`.
        concat_axis: Axis along which ``dx`` and ``dy`` were joined (0 or 1), when quantized.
        *args: Passed to :func:`dequantize_flow`.
        **kwargs: Passed to :func:`dequantize_flow`.

    Returns:
        The float32 flow ``(h, w, 2)``.

    Raises:
        ValueError: An array that is not ``(h, w, 2)``.
        TypeError: ``flow_or_path`` is neither an array nor a str.
        OSError: The file is not a flow file.
    """
    if isinstance(flow_or_path, np.ndarray):
        if flow_or_path.ndim != 3 or flow_or_path.shape[-1] != 2:
            raise ValueError(f"a flow array must have shape (h, w, 2), not {flow_or_path.shape}")
        return flow_or_path
    if not is_str(flow_or_path):
        raise TypeError(
            f"flow_or_path must be a file name or a numpy array, not {type(flow_or_path)}"
        )
    if quantize:
        assert concat_axis in (0, 1), f"concat_axis must be 0 or 1, not {concat_axis}"
        joined = imread(flow_or_path, flag="unchanged")
        if joined.ndim != 2:
            raise OSError(
                f"{flow_or_path} is not a quantized flow file: it has {joined.ndim} dimensions"
            )
        assert joined.shape[concat_axis] % 2 == 0, "dx and dy must have the same size"
        dx, dy = np.split(joined, 2, axis=concat_axis)
        return dequantize_flow(dx, dy, *args, **kwargs).astype(np.float32)
    with open(flow_or_path, "rb") as f:
        if f.read(4) != _FLO_MAGIC:
            raise OSError(f"Invalid flow file: {flow_or_path}, the header is not PIEH")
        w = np.fromfile(f, np.int32, 1).squeeze()
        h = np.fromfile(f, np.int32, 1).squeeze()
        flow = np.fromfile(f, np.float32, w * h * 2).reshape((h, w, 2))
    return flow.astype(np.float32)


def flowwrite(
    flow: np.ndarray,
    filename: str,
    quantize: bool = False,
    concat_axis: int = 0,
    *args: Any,
    **kwargs: Any,
) -> None:
    """Write a flow map as a ``.flo`` file (lossless) or as one quantized image (lossy).

    Args:
        flow: The flow ``(h, w, 2)``.
        filename: Output path (an image extension such as ``.jpg``/``.png`` when quantized).
        quantize: Quantize ``dx`` and ``dy`` to uint8 and join them along ``concat_axis``;
            the remaining arguments go to :func:`quantize_flow`.
        concat_axis: 0 (stacked vertically) or 1 (side by side).
        *args: Passed to :func:`quantize_flow`.
        **kwargs: Passed to :func:`quantize_flow`.
    """
    if quantize:
        assert concat_axis in (0, 1), f"concat_axis must be 0 or 1, not {concat_axis}"
        dx, dy = quantize_flow(flow, *args, **kwargs)
        imwrite(np.concatenate((dx, dy), axis=concat_axis), filename)
        return
    with open(filename, "wb") as f:
        f.write(_FLO_MAGIC)
        np.array([flow.shape[1], flow.shape[0]], dtype=np.int32).tofile(f)
        flow.astype(np.float32).tofile(f)


def quantize_flow(flow: np.ndarray, max_val: float = 0.02, norm: bool = True) -> tuple:
    """Quantize ``dx`` and ``dy`` of a flow to uint8 (255 levels, so 0 maps back to 0).

    Args:
        flow: The flow ``(h, w, 2)``.
        max_val: Values beyond ``[-max_val, max_val]`` (after ``norm``) are clipped.
        norm: Divide ``dx`` by the width and ``dy`` by the height first.

    Returns:
        ``(dx, dy)``, two uint8 arrays ``(h, w)``.
    """
    h, w, _ = flow.shape
    dx, dy = flow[..., 0], flow[..., 1]
    if norm:
        dx, dy = dx / w, dy / h
    return tuple(quantize(d, -max_val, max_val, 255, np.uint8) for d in (dx, dy))


def dequantize_flow(
    dx: np.ndarray, dy: np.ndarray, max_val: float = 0.02, denorm: bool = True
) -> np.ndarray:
    """Rebuild a flow from the output of :func:`quantize_flow`.

    Args:
        dx: Quantized ``dx``, ``(h, w)`` or ``(h, w, 1)``.
        dy: Quantized ``dy``, same shape.
        max_val: The ``max_val`` used to quantize.
        denorm: Multiply ``dx`` by the width and ``dy`` by the height.

    Returns:
        The flow ``(h, w, 2)`` (float64).
    """
    assert dx.shape == dy.shape, f"dx and dy differ in shape: {dx.shape} and {dy.shape}"
    assert dx.ndim == 2 or (dx.ndim == 3 and dx.shape[-1] == 1)
    dx, dy = (dequantize(d, -max_val, max_val, 255) for d in (dx, dy))
    if denorm:
        dx *= dx.shape[1]
        dy *= dx.shape[0]
    return np.dstack((dx, dy))


def flow_warp(
    img: np.ndarray, flow: np.ndarray, filling_value: int = 0, interpolate_mode: str = "nearest"
) -> np.ndarray:
    """Sample ``img`` at ``(y + dy, x + dx)`` for every output pixel ``(y, x)``.

    Pixels whose source lies outside ``[0, h - 1) x [0, w - 1)`` get ``filling_value``.

    Args:
        img: Image ``(h, w, c)``.
        flow: Flow ``(h, w, 2)``.
        filling_value: Value of the pixels with no source.
        interpolate_mode: ``'nearest'`` or ``'bilinear'``.

    Returns:
        The warped image, ``img``'s dtype.

    Raises:
        NotImplementedError: Another ``interpolate_mode``.
    """
    warnings.warn("flow_warp is a numpy prototype, not tuned for speed", UserWarning, stacklevel=2)
    assert flow.ndim == 3, "the flow must be a 3-D array"
    height, width = flow.shape[:2]
    output = np.ones((height, width, img.shape[2]), dtype=img.dtype) * filling_value

    rows, cols = np.indices((height, width))
    src_y = rows + flow[:, :, 1]
    src_x = cols + flow[:, :, 0]
    y0, x0 = np.floor(src_y).astype(int), np.floor(src_x).astype(int)
    valid = (y0 >= 0) & (y0 < height - 1) & (x0 >= 0) & (x0 < width - 1)
    src_y, src_x = src_y[valid], src_x[valid]

    if interpolate_mode == "nearest":
        output[valid, :] = img[src_y.round().astype(int), src_x.round().astype(int), :]
    elif interpolate_mode == "bilinear":
        # Nudge integer positions off the grid so that floor and ceil differ (weights sum to 1).
        src_y, src_x = src_y + 1e-6, src_x + 1e-6
        top, bottom = np.floor(src_y), np.ceil(src_y)
        left, right = np.floor(src_x), np.ceil(src_x)
        w_top, w_bottom = (bottom - src_y)[:, None], (src_y - top)[:, None]
        w_left, w_right = (right - src_x)[:, None], (src_x - left)[:, None]
        top, bottom = top.astype(int), bottom.astype(int)
        left, right = left.astype(int), right.astype(int)
        output[valid, :] = (
            img[top, left, :] * w_top * w_left
            + img[bottom, left, :] * w_bottom * w_left
            + img[top, right, :] * w_top * w_right
            + img[bottom, right, :] * w_bottom * w_right
        )
    else:
        raise NotImplementedError(
            f"interpolate_mode must be 'nearest' or 'bilinear', not {interpolate_mode!r}"
        )
    return output.astype(img.dtype)


def flow_from_bytes(content: bytes) -> np.ndarray:
    """Decode a ``.flo`` file's bytes (FlyingChairs, FlyingThings3D, Sintel, ...).

    Args:
        content: The file's bytes.

    Returns:
        The float32 flow ``(h, w, 2)`` (read-only: it shares ``content``'s memory).

    Raises:
        ValueError: The header is not ``PIEH``.
    """
    if bytes(content[:4]) != _FLO_MAGIC:
        raise ValueError("Flow file header does not contain PIEH")
    width = np.frombuffer(content[4:], np.int32, 1).squeeze()
    height = np.frombuffer(content[8:], np.int32, 1).squeeze()
    return np.frombuffer(content[12:], np.float32, width * height * 2).reshape((height, width, 2))


def sparse_flow_from_bytes(content: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Decode a KITTI flow PNG (16-bit; channels dx, dy, valid, stored in BGR order).

    Args:
        content: The PNG's bytes.

    Returns:
        ``(flow, valid)``: float32 flow ``(h, w, 2)`` and the float32 valid mask ``(h, w)``.
    """
    png = cv2.imdecode(np.frombuffer(content, np.uint8), cv2.IMREAD_ANYDEPTH | cv2.IMREAD_COLOR)
    channels = png[:, :, ::-1].astype(np.float32)
    flow, valid = channels[:, :, :2], channels[:, :, 2]
    return (flow - 2**15) / 64.0, valid
