"""Uniform quantization of a value range into integer levels, and back (bin centres)."""

from __future__ import annotations

from typing import Any, Union

import numpy as np

Number = Union[int, float]


def _check_range(min_val: Number, max_val: Number, levels: int) -> None:
    if not isinstance(levels, int) or levels <= 1:
        raise ValueError(f"levels must be an integer greater than 1, but got {levels!r}")
    if min_val >= max_val:
        raise ValueError(f"min_val ({min_val}) must be smaller than max_val ({max_val})")


def quantize(
    arr: np.ndarray, min_val: Number, max_val: Number, levels: int, dtype: Any = np.int64
) -> np.ndarray:
    """Map values to ``levels`` equal bins of ``[min_val, max_val]``, numbered from 0.

    Values outside the range are clipped first, so the result lies in ``[0, levels - 1]``.

    Args:
        arr: Input array.
        min_val: Lower end of the range.
        max_val: Upper end of the range.
        levels: Number of bins (an int greater than 1).
        dtype: Integer type of the result.

    Returns:
        The bin index of each element.

    Raises:
        ValueError: ``levels`` is not an int above 1, or ``min_val >= max_val``.
    """
    _check_range(min_val, max_val, levels)
    span = max_val - min_val
    shifted = np.clip(arr, min_val, max_val) - min_val
    # max_val itself falls on the edge of bin ``levels``; it belongs to the last bin.
    return np.minimum(np.floor(levels * shifted / span).astype(dtype), levels - 1)


def dequantize(
    arr: np.ndarray, min_val: Number, max_val: Number, levels: int, dtype: Any = np.float64
) -> np.ndarray:
    """Map bin indices produced by :func:`quantize` back to the centres of their bins.

    Args:
        arr: Bin indices.
        min_val: Lower end of the range used to quantize.
        max_val: Upper end of the range used to quantize.
        levels: Number of bins used to quantize.
        dtype: Floating type of the result.

    Returns:
        The value at the centre of each element's bin.

    Raises:
        ValueError: ``levels`` is not an int above 1, or ``min_val >= max_val``.
    """
    _check_range(min_val, max_val, levels)
    return (arr + 0.5).astype(dtype) * (max_val - min_val) / levels + min_val
