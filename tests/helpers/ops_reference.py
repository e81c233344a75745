"""Slow per-sample references that follow mmcv's kernels, shared by the ops tests."""

from __future__ import annotations

from typing import Any


def mmcv_bilinear_taps(
    height: int, width: int, y: float, x: float
) -> tuple[int, int, int, int, float, float] | None:
    """mmcv's bilinear taps at ``(y, x)`` of an ``height x width`` map, or None outside it.

    Returns ``(y_low, y_high, x_low, x_high, ly, lx)``: outside ``(-1, H) x (-1, W)`` there are
    none; inside, coordinates clamp to the border, as in mmcv's roi_align / roi_align_rotated /
    rotated_feature_align / deform_roi_pool kernels (their ``bilinear_interpolate(_gradient)``).
    """
    if y < -1.0 or y > height or x < -1.0 or x > width:
        return None
    y, x = max(y, 0.0), max(x, 0.0)
    y_low, x_low = int(y), int(x)
    if y_low >= height - 1:
        y_low = y_high = height - 1
        y = float(y_low)
    else:
        y_high = y_low + 1
    if x_low >= width - 1:
        x_low = x_high = width - 1
        x = float(x_low)
    else:
        x_high = x_low + 1
    return y_low, y_high, x_low, x_high, y - y_low, x - x_low


def mmcv_bilinear(image: Any, y: float, x: float) -> Any:
    """mmcv's ``bilinear_interpolate`` at one point of ``image`` (tensor or array, ``(..., H, W)``).

    Zero outside the map (see :func:`mmcv_bilinear_taps`). Leading dimensions are kept (one
    value per channel).
    """
    taps = mmcv_bilinear_taps(image.shape[-2], image.shape[-1], y, x)
    if taps is None:
        return 0.0 * image[..., 0, 0]
    y_low, y_high, x_low, x_high, ly, lx = taps
    return (
        (1 - ly) * (1 - lx) * image[..., y_low, x_low]
        + (1 - ly) * lx * image[..., y_low, x_high]
        + ly * (1 - lx) * image[..., y_high, x_low]
        + ly * lx * image[..., y_high, x_high]
    )
