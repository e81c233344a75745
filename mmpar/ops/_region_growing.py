"""Region growing in the order of one FIFO queue, for the text-detection post-processing ops.

mmcv's ``pixel_group`` (PAN) and ``contour_expand`` (PSENet) kernels grow labelled seeds over a
mask with one ``std::queue``: a popped pixel visits its four neighbours in a fixed order, and
gives its label to each one that is unlabelled (label <= 0) and passes the op's test, pushing
it. Everything pushed while the pixels ``t`` steps from a seed are popped comes after all of
them, so the queue runs level by level, and within a level in push order. A pixel that several
pixels of one level could claim goes to the one popped first; one popped pixel pushes its
neighbours in direction order. So one level is a few array operations here: list the
(popped pixel, direction) pairs in pop order then direction order, keep those whose neighbour
may be claimed, keep the first pair per neighbour; those neighbours, in that order, are the
next level. The result is the kernels' labelling exactly, ties included.

The ops take numpy arrays or tensors (on any device) and work on CPU numpy copies, as mmcv's
kernels work on CPU memory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from mmpar.utils.compat_errors import CheckTypeError, CheckValueError

__all__ = ["DtypeError", "as_cpu_array", "grow_fifo", "integer_labels"]


class DtypeError(TypeError, RuntimeError):
    """An input of a dtype the op cannot read (mmcv's kernels raise RuntimeError for it)."""


def as_cpu_array(op: str, name: str, value: object, ndim: int) -> np.ndarray:
    """``value`` (numpy array or tensor on any device) as a CPU numpy array of ``ndim`` dims.

    Raises:
        CheckTypeError: Neither an array nor a tensor (mmcv asserts the type).
        CheckValueError: Not ``ndim``-dimensional.
    """
    if isinstance(value, torch.Tensor):
        array = value.detach().cpu().numpy()
    elif isinstance(value, np.ndarray):
        array = value
    else:
        raise CheckTypeError(
            f"{op}: {name} must be a numpy array or a torch.Tensor, got {type(value).__name__}"
        )
    if array.ndim != ndim:
        raise CheckValueError(
            f"{op}: {name} must have {ndim} dimensions, got shape {tuple(array.shape)}"
        )
    return array


def integer_labels(op: str, name: str, labels: np.ndarray, high: int, what: str) -> np.ndarray:
    """``labels`` flattened to int64 after checking they are integers in ``[0, high]``.

    mmcv's kernels index per-label tables with these labels unchecked, so a label out of that
    range reads or writes memory outside them; that is refused here.

    Raises:
        DtypeError: Not an integer (or bool) array.
        ValueError: A label below 0 or above ``high``.
    """
    if labels.dtype != np.bool_ and not np.issubdtype(labels.dtype, np.integer):
        raise DtypeError(
            f"{op}: {name} must hold integer labels (int32, as cv2.connectedComponents "
            f"returns), got dtype {labels.dtype}"
        )
    flat = labels.reshape(-1).astype(np.int64)
    if flat.size and (flat.min() < 0 or flat.max() > high):
        bad = int(flat[(flat < 0) | (flat > high)][0])
        raise ValueError(
            f"{op}: {name} holds label {bad}, outside 0..{high} ({what}); pass the label "
            "count that produced the labels"
        )
    return flat


def grow_fifo(
    labels: np.ndarray,
    seeds: np.ndarray,
    directions: Sequence[tuple[int, int]],
    claimable: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> np.ndarray:
    """Grow ``labels`` from ``seeds`` as the kernels' FIFO queue does.

    Args:
        labels: The ``(H, W)`` label map; a pixel is free while its label is <= 0.
        seeds: Flat indices (into ``H * W``) of the queued pixels, in queue order.
        directions: ``(d_row, d_col)`` of the four neighbours, in the kernel's visiting order.
        claimable: ``f(targets, source_labels)``: which free neighbours ``targets`` (flat
            indices) the popped pixels may claim for their labels (the op's own test).

    Returns:
        The grown ``(H * W,)`` int64 label map.
    """
    height, width = labels.shape
    # A one-pixel frame of taken pixels around the map: no bounds checks per neighbour.
    row = width + 2
    grid = np.ones((height + 2, row), dtype=np.int64)
    grid[1:-1, 1:-1] = labels
    grid = grid.reshape(-1)
    steps = np.array([d_row * row + d_col for d_row, d_col in directions], dtype=np.int64)
    seeds = np.asarray(seeds, dtype=np.int64)
    frontier = seeds + (seeds // width) * 2 + row + 1
    # first[p]: the earliest claim on pixel p in this level (np.minimum.at takes repeats).
    unclaimed = np.iinfo(np.int64).max
    first = np.full(grid.size, unclaimed, dtype=np.int64)
    while frontier.size:
        # Row-major over (popped pixel, direction): the nonzero pairs come in queue order.
        neighbours = frontier[:, None] + steps
        popped, direction = np.nonzero(grid[neighbours] <= 0)
        targets = neighbours[popped, direction]
        owners = grid[frontier[popped]]
        inner = targets - row - 1
        inner -= (inner // row) * 2
        ok = claimable(inner, owners)
        targets, owners = targets[ok], owners[ok]
        order = np.arange(len(targets))
        np.minimum.at(first, targets, order)
        winners = first[targets] == order
        first[targets] = unclaimed
        frontier = targets[winners]
        grid[frontier] = owners[winners]
    return grid.reshape(height + 2, row)[1:-1, 1:-1].reshape(-1)
