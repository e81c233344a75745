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
    width: int,
    seeds: np.ndarray,
    directions: Sequence[tuple[int, int]],
    claimable: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> np.ndarray:
    """Grow ``labels`` from ``seeds`` as the kernels' FIFO queue does, in place.

    Args:
        labels: Flat ``(H * W,)`` int64 label map; a pixel is free while its label is <= 0.
        width: The map's width W.
        seeds: Flat indices of the queued pixels, in queue order.
        directions: ``(d_row, d_col)`` of the four neighbours, in the kernel's visiting order.
        claimable: ``f(targets, sources)``: which free in-image neighbours ``targets`` the
            popped pixels ``sources`` may claim (the op's own test).

    Returns:
        The popped pixels that claimed no neighbour, in pop order (PSENet queues them again).
    """
    height = labels.size // width if width else 0
    d_row = np.array([d[0] for d in directions], dtype=np.int64)
    d_col = np.array([d[1] for d in directions], dtype=np.int64)
    idle = []
    frontier = seeds.astype(np.int64)
    while frontier.size:
        rows, cols = np.divmod(frontier, width)
        n_rows = rows[:, None] + d_row
        n_cols = cols[:, None] + d_col
        # Row-major over (popped pixel, direction): boolean indexing keeps the queue's order.
        inside = (n_rows >= 0) & (n_rows < height) & (n_cols >= 0) & (n_cols < width)
        sources = np.broadcast_to(frontier[:, None], inside.shape)[inside]
        targets = (n_rows * width + n_cols)[inside]
        free = labels[targets] <= 0
        sources, targets = sources[free], targets[free]
        ok = claimable(targets, sources)
        sources, targets = sources[ok], targets[ok]
        _, first = np.unique(targets, return_index=True)
        first.sort()
        sources, targets = sources[first], targets[first]
        labels[targets] = labels[sources]
        idle.append(frontier[~np.isin(frontier, sources)])
        frontier = targets
    return np.concatenate(idle) if idle else np.empty(0, dtype=np.int64)
