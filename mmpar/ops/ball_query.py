"""Ball query (mmcv.ops.ball_query): the first points within a radius of each centre.

On any device, in chunks of centres so the pairwise step stays within a fixed memory budget.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor

from ._autograd import op_function
from ._points_common import (
    batch_counts,
    check,
    check_pair,
    check_points,
    chunk_ranges,
    first_true_indices,
    squared_distances,
)

__all__ = ["BallQuery", "ball_query"]

_OP = "ball_query"


def _square32(radius: float) -> float:
    # mmcv's kernel squares the radius in float32.
    return float(np.float32(radius) * np.float32(radius))


def _query(
    xyz: Tensor, center_xyz: Tensor, sample_num: int, keep: Callable[[Tensor], Tensor], empty: int
) -> Tensor:
    """Indices ``(B, M, sample_num)`` of the first points with ``keep(d2)``, padded as mmcv."""
    batch, m = center_xyz.shape[:2]
    n = xyz.shape[1]
    out = torch.empty(batch, m, sample_num, dtype=torch.long, device=xyz.device)
    for start, stop in chunk_ranges(m, batch * n):
        d2 = squared_distances(center_xyz[:, start:stop], xyz)
        pos, count = first_true_indices(keep(d2), sample_num)
        # mmcv fills a ball's unused slots with its first point (``empty`` if it has none).
        first = torch.where(count > 0, pos[..., 0], empty).unsqueeze(-1)
        out[:, start:stop] = torch.where(pos >= 0, pos, first)
    return out


def _stacked(
    max_radius: float,
    sample_num: int,
    xyz: Tensor,
    center_xyz: Tensor,
    xyz_batch_cnt: Tensor,
    center_xyz_batch_cnt: Tensor,
) -> Tensor:
    check_points(xyz, _OP, "xyz", 2, 3)
    check_points(center_xyz, _OP, "center_xyz", 2, 3)
    counts, center_counts = batch_counts(
        _OP,
        {
            "xyz_batch_cnt": (xyz.shape[0], xyz_batch_cnt),
            "center_xyz_batch_cnt": (center_xyz.shape[0], center_xyz_batch_cnt),
        },
    )
    radius2 = _square32(max_radius)
    parts = []
    for pts, ctr in zip(xyz.split(counts), center_xyz.split(center_counts)):
        # The stacked kernel keeps d2 < radius^2 only, and marks an empty ball with -1.
        parts.append(_query(pts[None], ctr[None], sample_num, lambda d2: d2 < radius2, -1)[0])
    if not parts:
        return center_xyz.new_zeros((0, sample_num), dtype=torch.int32)
    return torch.cat(parts).to(torch.int32)


def ball_query(
    min_radius: float,
    max_radius: float,
    sample_num: int,
    xyz: Tensor,
    center_xyz: Tensor,
    xyz_batch_cnt: Tensor | None = None,
    center_xyz_batch_cnt: Tensor | None = None,
) -> Tensor:
    """Find up to ``sample_num`` points in a ball (a shell) around each centre.

    A point belongs to a ball when its squared distance ``d2`` to the centre is 0 or
    ``min_radius**2 <= d2 < max_radius**2`` (squares in float32, as mmcv's kernel). The first
    such points in index order are returned; unused slots repeat the first one, and a ball
    with no point holds zeros (mmcv's convention; the stacked form marks it ``-1``).
    Not differentiable (indices).

    Args:
        min_radius: Inner radius of the shell.
        max_radius: Outer radius (must exceed ``min_radius``).
        sample_num: Points per ball.
        xyz: ``(B, N, 3)`` points, or stacked ``(N1 + N2 + ..., 3)``.
        center_xyz: ``(B, M, 3)`` centres, or stacked ``(M1 + M2 + ..., 3)``.
        xyz_batch_cnt: With the stacked form: int32 ``(N1, N2, ...)``. Only ``max_radius``
            counts then, as in mmcv.
        center_xyz_batch_cnt: With the stacked form: int32 ``(M1, M2, ...)``.

    Returns:
        int32 ``(B, M, sample_num)`` indices into each sample's points, or stacked
        ``(M1 + M2 + ..., sample_num)`` indices local to each sample.

    Raises:
        AssertionError: When ``min_radius >= max_radius``, on wrong shapes, or different batch
            sizes or devices (as mmcv asserts the first two).
        TypeError: When the coordinates are not floating tensors.
        ValueError: When the stacked counts disagree with the inputs, or ``sample_num < 1``.
    """
    check(
        min_radius < max_radius,
        _OP,
        f"min_radius {min_radius} must be below max_radius {max_radius}",
        AssertionError,
    )
    check(
        isinstance(sample_num, int) and sample_num >= 1,
        _OP,
        f"sample_num must be an int >= 1, got {sample_num!r}",
    )
    with torch.no_grad():
        if xyz_batch_cnt is not None and center_xyz_batch_cnt is not None:
            return _stacked(
                max_radius, sample_num, xyz, center_xyz, xyz_batch_cnt, center_xyz_batch_cnt
            )
        check_points(xyz, _OP, "xyz", 3, 3)
        check_points(center_xyz, _OP, "center_xyz", 3, 3)
        check_pair(_OP, xyz, center_xyz, "xyz", "center_xyz")
        low2, high2 = _square32(min_radius), _square32(max_radius)
        if low2 == 0 and high2 > 0:
            # d2 >= 0, so "d2 == 0 or 0 <= d2 < high2" is just "d2 < high2": one pass, not five.
            def keep(d2: Tensor) -> Tensor:
                return d2 < high2
        else:

            def keep(d2: Tensor) -> Tensor:
                return (d2 == 0) | ((d2 >= low2) & (d2 < high2))

        idx = _query(xyz, center_xyz, sample_num, keep, 0)
        return idx.to(torch.int32)


BallQuery = op_function("BallQuery", ball_query, __name__)
