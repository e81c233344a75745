"""mmcv 1.x's ``mmcv.ops.pixel_group``: PAN's grouping of text pixels around their kernels.

Each text kernel (a connected component of the kernel map, label > 0) has an embedding: the mean
of its pixels' embeddings. Starting from the kernels' contour pixels, text pixels are grown into
the kernel whose embedding lies closer than ``distance_threshold`` to theirs, in the order of
mmcv's queue (:mod:`mmpar.ops._region_growing`). Then each instance gets its mean score, pixel
count and pixel coordinates.

Equal to mmcv-full 1.7.2's CPU kernel, float for float: sums of float32 in row-major order
(``np.add.at`` adds one element at a time), and the squared embedding distance accumulated as
the kernel does it (each square exact in double, the running sum rounded to float32).
"""

from __future__ import annotations

import math

import numpy as np
from torch import Tensor

from mmpar.utils.compat_errors import CheckTypeError, CheckValueError

from ._region_growing import as_cpu_array, grow_fifo, integer_labels

__all__ = ["pixel_group"]

# mmcv's kernel visits the left, right, upper, lower neighbour, in that order.
_DIRECTIONS = ((0, -1), (0, 1), (-1, 0), (1, 0))


def _sum_by_label(values: np.ndarray, labels: np.ndarray, count: int) -> np.ndarray:
    """Per-label float32 sums of ``(N,)`` or ``(N, C)`` values, added one at a time in order.

    ``np.add.at`` adds element by element (no pairwise summation), as the kernel's loop does;
    one channel at a time is its fast path.
    """
    columns = values.reshape(len(values), math.prod(values.shape[1:]))
    sums = np.zeros((columns.shape[1], count), dtype=np.float32)
    for channel, column in enumerate(columns.T):
        np.add.at(sums[channel], labels, np.ascontiguousarray(column))
    return sums.T.reshape(count, *values.shape[1:])


def _close_enough(kernel_mean: np.ndarray, embedding: np.ndarray, threshold: float) -> np.ndarray:
    """The kernel's test ``sum_d (k_d - e_d)^2 < threshold^2``, rounded as the kernel rounds.

    The kernel adds ``pow(k_d - e_d, 2)`` (a double: the square of a float32 is exact) to a
    float32 sum, and stops once the sum reaches ``threshold^2`` (a float32 product); a sum that
    became NaN before reaching it passes, as there.
    """
    limit = np.float32(threshold) * np.float32(threshold)
    total = np.zeros(len(embedding), dtype=np.float32)
    far = np.zeros(len(embedding), dtype=bool)
    for d in range(embedding.shape[1]):
        diff = kernel_mean[:, d] - embedding[:, d]
        step = (total.astype(np.float64) + np.square(diff, dtype=np.float64)).astype(np.float32)
        total = np.where(far, total, step)
        far |= total >= limit
    return ~far


def pixel_group(
    score: np.ndarray | Tensor,
    mask: np.ndarray | Tensor,
    embedding: np.ndarray | Tensor,
    kernel_label: np.ndarray | Tensor,
    kernel_contour: np.ndarray | Tensor,
    kernel_region_num: int,
    distance_threshold: float,
) -> list[list[float]]:
    """Group text pixels into instances around their kernels (PAN's post-processing).

    Args:
        score: Text score per pixel, ``(H, W)``.
        mask: Text mask, ``(H, W)``: only these pixels are grouped (nonzero is text).
        embedding: Per-pixel embedding, ``(H, W, C)``.
        kernel_label: Kernel label per pixel, ``(H, W)`` integers (0: background), e.g. from
            ``cv2.connectedComponents``.
        kernel_contour: Nonzero on the kernels' contour pixels, ``(H, W)``; growth starts there.
        kernel_region_num: The number of labels, background included (all labels are below it).
        distance_threshold: Largest embedding distance (exclusive) between a pixel and the
            kernel it joins.

    Returns:
        One list per label: ``[mean score, pixel count, x0, y0, x1, y1, ...]`` (floats) over the
        instance's pixels in row-major order; ``[0.0, 0.0]`` for the background (label 0) and
        for labels with no pixel.

    Raises:
        CheckTypeError: An input is not an array or tensor, ``kernel_region_num`` not an int or
            ``distance_threshold`` not a float (mmcv asserts these).
        CheckValueError: The shapes do not agree.
        DtypeError: ``kernel_label`` does not hold integers.
        ValueError: A label is negative or not below ``kernel_region_num``.
    """
    op = "pixel_group"
    if not isinstance(kernel_region_num, int):
        raise CheckTypeError(f"{op}: kernel_region_num must be an int, got {kernel_region_num!r}")
    if not isinstance(distance_threshold, float):
        raise CheckTypeError(
            f"{op}: distance_threshold must be a float, got {distance_threshold!r}"
        )
    score_a = as_cpu_array(op, "score", score, 2)
    mask_a = as_cpu_array(op, "mask", mask, 2)
    embedding_a = as_cpu_array(op, "embedding", embedding, 3)
    label_a = as_cpu_array(op, "kernel_label", kernel_label, 2)
    contour_a = as_cpu_array(op, "kernel_contour", kernel_contour, 2)
    height, width = score_a.shape
    for name, array in (("mask", mask_a), ("kernel_label", label_a), ("kernel_contour", contour_a)):
        if array.shape != (height, width):
            raise CheckValueError(
                f"{op}: {name} has shape {tuple(array.shape)}, score {(height, width)}: give "
                "every map the same (H, W)"
            )
    if embedding_a.shape[:2] != (height, width):
        raise CheckValueError(
            f"{op}: embedding must be (H, W, C) = ({height}, {width}, C) like score, got "
            f"{tuple(embedding_a.shape)}"
        )
    count = max(kernel_region_num, 0)
    labels = integer_labels(
        op, "kernel_label", label_a, max(count - 1, 0), f"kernel_region_num is {kernel_region_num}"
    )
    channels = embedding_a.shape[2]
    emb = embedding_a.reshape(height * width, channels).astype(np.float32, copy=False)
    in_kernel = np.flatnonzero(labels > 0)
    kernel_sum = _sum_by_label(emb[in_kernel], labels[in_kernel], count)
    kernel_size = np.bincount(labels[in_kernel], minlength=count).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):  # labels without pixels: never used
        kernel_mean = kernel_sum / kernel_size[:, None]
    text = mask_a.reshape(-1) != 0
    # The kernel's loop over a row stops at once when C == 0: no pixel is queued then.
    seeds = in_kernel[contour_a.reshape(-1)[in_kernel] != 0] if channels else in_kernel[:0]

    def claimable(targets: np.ndarray, owners: np.ndarray) -> np.ndarray:
        ok = text[targets]
        ok[ok] = _close_enough(kernel_mean[owners[ok]], emb[targets[ok]], distance_threshold)
        return ok

    grown = grow_fifo(labels.reshape(height, width), seeds, _DIRECTIONS, claimable)
    return _instances(grown, score_a.reshape(-1), width, count)


def _instances(labels: np.ndarray, score: np.ndarray, width: int, count: int) -> list[list[float]]:
    """``[mean score, pixel count, x, y, ...]`` per label, as the kernel's last pass builds it."""
    pixels = np.flatnonzero(labels > 0)
    owner = labels[pixels]
    score_sum = _sum_by_label(score[pixels].astype(np.float32, copy=False), owner, count)
    size = np.bincount(owner, minlength=count).astype(np.float32)
    mean = np.divide(score_sum, size, out=score_sum.copy(), where=size > 0)
    # A stable sort keeps each instance's pixels in row-major order (radix sort on int16).
    key = owner.astype(np.int16) if count <= np.iinfo(np.int16).max else owner
    rows, cols = np.divmod(pixels[np.argsort(key, kind="stable")], width)
    coords = np.stack([cols, rows], axis=1).astype(np.float64).reshape(-1)
    ends = np.cumsum(size.astype(np.int64)) * 2
    heads = np.stack([mean, size], axis=1).astype(np.float64)
    # One numpy row per instance, then one tolist each: every float object is made once.
    return [
        np.concatenate([heads[i], coords[(ends[i - 1] if i else 0) : ends[i]]]).tolist()
        for i in range(count)
    ]
