"""Named BGR colours and ``color_val``, which turns any colour spec into a BGR tuple."""

from __future__ import annotations

from enum import Enum
from typing import Union

import numpy as np

from ..utils import is_str


class Color(Enum):
    """Common colours as BGR tuples (OpenCV's channel order)."""

    red = (0, 0, 255)
    green = (0, 255, 0)
    blue = (255, 0, 0)
    cyan = (255, 255, 0)
    yellow = (0, 255, 255)
    magenta = (255, 0, 255)
    white = (255, 255, 255)
    black = (0, 0, 0)


def color_val(color: Union[Color, str, tuple, int, np.ndarray]) -> tuple:
    """Return a colour as a BGR tuple.

    Args:
        color: A :class:`Color`, its name (``'red'``), a BGR tuple of 3 values in [0, 255], one
            int for a gray level, or a 1-D array of 3 values.

    Returns:
        The ``(b, g, r)`` tuple (the tuple itself if one was given; uint8 values for an array).

    Raises:
        KeyError: Unknown colour name.
        TypeError: Another type.
    """
    if is_str(color):
        return Color[color].value
    if isinstance(color, Color):
        return color.value
    if isinstance(color, tuple):
        assert len(color) == 3, f"a colour tuple has 3 values, not {len(color)}"
        assert all(0 <= channel <= 255 for channel in color), f"values out of [0, 255]: {color}"
        return color
    if isinstance(color, int):
        assert 0 <= color <= 255, f"a gray level must lie in [0, 255], not {color}"
        return color, color, color
    if isinstance(color, np.ndarray):
        assert color.ndim == 1 and color.size == 3, f"a colour array has 3 values: {color}"
        assert np.all((color >= 0) & (color <= 255)), f"values out of [0, 255]: {color}"
        return tuple(color.astype(np.uint8))
    raise TypeError(f"Invalid type for color: {type(color)}")
