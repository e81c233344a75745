"""mmcv 1.x's ``mmcv.ops.contour_expand``: PSENet's expansion of text kernels into instances.

The labelled pixels of kernels of at least ``min_kernel_area`` pixels are queued in row-major
order and grown in the order of mmcv's queue (:mod:`mmpar.ops._region_growing`). mmcv's kernel
runs ``kernel_mask.shape[0] - 1`` rounds, each meant to grow into the next larger kernel, with
the pixels that claimed nothing queued again for the next; but mmcv 1.7.2's kernel reads the
first (largest) mask in every round (its table of per-kernel offsets is never filled in: all
zero). So the first round grows each kernel over the whole first mask and the later rounds add
nothing. This op does the same, so instances equal mmcv-full's, ties included.
"""

from __future__ import annotations

import numpy as np
from torch import Tensor

from mmpar.utils.compat_errors import CheckTypeError, CheckValueError

from ._region_growing import as_cpu_array, grow_fifo, integer_labels

__all__ = ["contour_expand"]

# mmcv's kernel visits the upper, lower, left, right neighbour, in that order.
_DIRECTIONS = ((-1, 0), (1, 0), (0, -1), (0, 1))


def contour_expand(
    kernel_mask: np.ndarray | Tensor,
    internal_kernel_label: np.ndarray | Tensor,
    min_kernel_area: int,
    kernel_num: int,
) -> list[list[int]]:
    """Expand the labelled kernels over the text mask, giving every text pixel an instance.

    Args:
        kernel_mask: The kernel masks ``(K, H, W)``, largest first (nonzero: inside).
        internal_kernel_label: Labels ``(H, W)`` of the smallest kernel's components, integers
            (0: background), e.g. from ``cv2.connectedComponents``.
        min_kernel_area: Components of fewer pixels are dropped before expanding.
        kernel_num: The number of labels (labels are at most this).

    Returns:
        The instance label of every pixel: ``H`` lists of ``W`` ints (0: no instance).

    Raises:
        CheckTypeError: An input is not an array or tensor, or an int argument is not an int
            (mmcv asserts these).
        CheckValueError: The shapes do not agree.
        DtypeError: ``internal_kernel_label`` does not hold integers.
        ValueError: A label is negative or above ``kernel_num``.
    """
    op = "contour_expand"
    for name, value in (("min_kernel_area", min_kernel_area), ("kernel_num", kernel_num)):
        if not isinstance(value, int):
            raise CheckTypeError(f"{op}: {name} must be an int, got {value!r}")
    masks = as_cpu_array(op, "kernel_mask", kernel_mask, 3)
    label_map = as_cpu_array(op, "internal_kernel_label", internal_kernel_label, 2)
    if masks.shape[1:] != label_map.shape:
        raise CheckValueError(
            f"{op}: kernel_mask is {tuple(masks.shape)} (K, H, W), internal_kernel_label "
            f"{tuple(label_map.shape)}: give both the same (H, W)"
        )
    height, width = label_map.shape
    labels = integer_labels(
        op, "internal_kernel_label", label_map, max(kernel_num, 0), f"kernel_num is {kernel_num}"
    )
    area = np.bincount(labels, minlength=max(kernel_num, 0) + 1)
    labels[area[labels] < min_kernel_area] = 0
    if len(masks) > 1:
        # Later rounds would re-queue the pixels that claimed nothing; over the same mask none
        # of their neighbours can become claimable (labels are only ever added), so they add
        # nothing and one round is the whole result.
        first_mask = masks[0].reshape(-1) != 0
        labels = grow_fifo(
            labels.reshape(height, width),
            np.flatnonzero(labels),
            _DIRECTIONS,
            lambda targets, _: first_mask[targets],
        )
    return labels.reshape(height, width).tolist()
