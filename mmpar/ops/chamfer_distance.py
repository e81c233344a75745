"""Chamfer distance between 2D point sets (mmcv.ops.chamfer_distance), on any device."""

from __future__ import annotations

import torch
from torch import Tensor

from ._autograd import op_function
from ._points_common import check_pair, check_points, chunk_ranges, squared_distances

__all__ = ["ChamferDistanceFunction", "chamfer_distance"]


def _nearest(src: Tensor, dst: Tensor) -> Tensor:
    """Index of each ``src`` point's nearest ``dst`` point (the first of equal ones)."""
    batch, n = src.shape[:2]
    out = torch.zeros(batch, n, dtype=torch.long, device=src.device)
    if dst.shape[1] == 0:
        return out
    for start, stop in chunk_ranges(n, batch * dst.shape[1]):
        out[:, start:stop] = squared_distances(src[:, start:stop], dst).argmin(-1)
    return out


def _sq_dist_to(src: Tensor, dst: Tensor, idx: Tensor) -> Tensor:
    picked = dst.gather(1, idx.unsqueeze(-1).expand(*idx.shape, 2))
    diff = picked - src
    return diff[..., 0] * diff[..., 0] + diff[..., 1] * diff[..., 1]


def chamfer_distance(xyz1: Tensor, xyz2: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Squared distance from each point to its nearest point of the other set, both ways.

    Differentiable in both point sets, with mmcv's gradient (that of the squared distance
    to the chosen nearest point). The nearest point is exact (the first of equal ones).

    Args:
        xyz1: ``(B, N, 2)`` points.
        xyz2: ``(B, M, 2)`` points.

    Returns:
        ``(dist1, dist2, idx1, idx2)``: ``(B, N)`` and ``(B, M)`` squared distances, and
        ``(B, N)`` / ``(B, M)`` int32 indices of the nearest points in the other set.

    Raises:
        TypeError: When an input is not a floating tensor.
        AssertionError: On shapes other than ``(B, *, 2)`` or different batch sizes.
    """
    op = "chamfer_distance"
    check_points(xyz1, op, "xyz1", 3, 2)
    check_points(xyz2, op, "xyz2", 3, 2)
    check_pair(op, xyz1, xyz2, "xyz1", "xyz2")
    with torch.no_grad():
        idx1 = _nearest(xyz1, xyz2)
        idx2 = _nearest(xyz2, xyz1)
    # Recomputed with autograd from the chosen pairs: the same values, and mmcv's gradient.
    dist1 = _sq_dist_to(xyz1, xyz2, idx1) if xyz2.shape[1] else xyz1.new_zeros(xyz1.shape[:2])
    dist2 = _sq_dist_to(xyz2, xyz1, idx2) if xyz1.shape[1] else xyz2.new_zeros(xyz2.shape[:2])
    return dist1, dist2, idx1.to(torch.int32), idx2.to(torch.int32)


ChamferDistanceFunction = op_function("ChamferDistanceFunction", chamfer_distance, __name__)
