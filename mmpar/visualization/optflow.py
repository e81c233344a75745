"""Optical flow as colour: the Middlebury colour wheel, ``flow2rgb`` and ``flowshow``."""

from __future__ import annotations

from typing import Union

import numpy as np

from ..image import rgb2bgr
from ..video import flowread
from .image import imshow


def flowshow(flow: Union[np.ndarray, str], win_name: str = "", wait_time: int = 0) -> None:
    """Show a flow map as colours in a window (see :func:`flow2rgb`).

    Args:
        flow: The flow ``(h, w, 2)`` or a ``.flo`` file.
        win_name: The window's name.
        wait_time: As :func:`~mmpar.visualization.imshow`.
    """
    imshow(rgb2bgr(flow2rgb(flowread(flow))), win_name, wait_time)


def flow2rgb(
    flow: np.ndarray, color_wheel: np.ndarray | None = None, unknown_thr: float = 1e6
) -> np.ndarray:
    """Colour a flow map: hue from the direction, saturation from the magnitude.

    Magnitudes are divided by the largest one; NaN and values beyond ``unknown_thr`` are
    black.

    Args:
        flow: The flow ``(h, w, 2)``.
        color_wheel: ``(bins, 3)`` RGB colours in [0, 1]; default :func:`make_color_wheel`.
        unknown_thr: Components whose magnitude exceeds it mark the pixel unknown.

    Returns:
        An RGB float image ``(h, w, 3)`` in [0, 1].
    """
    assert flow.ndim == 3 and flow.shape[-1] == 2, f"flow must be (h, w, 2), not {flow.shape}"
    if color_wheel is None:
        color_wheel = make_color_wheel()
    assert color_wheel.ndim == 2 and color_wheel.shape[1] == 3, "color_wheel must be (n, 3)"
    num_bins = color_wheel.shape[0]

    dx = flow[:, :, 0].copy()
    dy = flow[:, :, 1].copy()
    unknown = np.isnan(dx) | np.isnan(dy) | (np.abs(dx) > unknown_thr) | (np.abs(dy) > unknown_thr)
    dx[unknown] = 0
    dy[unknown] = 0

    radius = np.sqrt(dx**2 + dy**2)
    if np.any(radius > np.finfo(float).eps):
        largest = np.max(radius)
        dx /= largest
        dy /= largest
    radius = np.sqrt(dx**2 + dy**2)

    # Position on the wheel from the angle, interpolated between the two nearest bins.
    angle = np.arctan2(-dy, -dx) / np.pi
    position = (angle + 1) / 2 * (num_bins - 1)
    lower = np.floor(position).astype(int)
    upper = (lower + 1) % num_bins
    weight = (position - lower.astype(np.float32))[..., None]
    rgb = (1 - weight) * color_wheel[lower, :] + weight * color_wheel[upper, :]

    # Inside the unit circle the colour fades towards white as the magnitude shrinks; outside
    # (never after the normalisation above, kept for custom wheels) it is darkened.
    inside = radius <= 1
    rgb[inside] = 1 - radius[inside, None] * (1 - rgb[inside])
    rgb[~inside] *= 0.75
    rgb[unknown, :] = 0
    return rgb


def make_color_wheel(bins: Union[list, tuple, None] = None) -> np.ndarray:
    """Build the Middlebury colour wheel.

    Args:
        bins: Numbers of bins of the six ramps red-yellow, yellow-green, green-cyan,
            cyan-blue, blue-magenta, magenta-red; default ``[15, 6, 4, 11, 13, 6]``.

    Returns:
        Float32 RGB colours in [0, 1], shape ``(sum(bins), 3)``.
    """
    if bins is None:
        bins = [15, 6, 4, 11, 13, 6]
    assert len(bins) == 6, f"bins has one count per ramp (6), not {len(bins)}"

    def rising(n: int) -> np.ndarray:
        return np.arange(n) / n

    # (red, green, blue) of each ramp: constants or a rising/falling ramp.
    ramps = [
        (1, rising(bins[0]), 0),
        (1 - rising(bins[1]), 1, 0),
        (0, 1, rising(bins[2])),
        (0, 1 - rising(bins[3]), 1),
        (rising(bins[4]), 0, 1),
        (1, 0, 1 - rising(bins[5])),
    ]
    wheel = np.zeros((sum(bins), 3), dtype=np.float32)
    start = 0
    for count, ramp in zip(bins, ramps):
        for channel, value in enumerate(ramp):
            wheel[start : start + count, channel] = value
        start += count
    return wheel
