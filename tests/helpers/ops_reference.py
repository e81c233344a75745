"""Slow per-sample references that follow mmcv's kernels, shared by the ops tests."""

from __future__ import annotations

from typing import Any


def mmcv_bilinear(image: Any, y: float, x: float) -> Any:
    """mmcv's ``bilinear_interpolate`` at one point of ``image`` (tensor or array, ``(..., H, W)``).

    Outside ``(-1, H) x (-1, W)`` the value is 0; inside, coordinates clamp to the border, as in
    mmcv's roi_align / roi_align_rotated / rotated_feature_align kernels. Leading dimensions are
    kept (one value per channel).
    """
    height, width = image.shape[-2:]
    if y < -1.0 or y > height or x < -1.0 or x > width:
        return 0.0 * image[..., 0, 0]
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
    ly, lx = y - y_low, x - x_low
    return (
        (1 - ly) * (1 - lx) * image[..., y_low, x_low]
        + (1 - ly) * lx * image[..., y_low, x_high]
        + ly * (1 - lx) * image[..., y_high, x_low]
        + ly * lx * image[..., y_high, x_high]
    )
