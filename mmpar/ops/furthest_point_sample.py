"""Furthest point sampling (mmcv.ops.furthest_point_sample), in PyTorch on any device.

Sampling is sequential by nature (each pick depends on the previous one): one step per
sampled point, each step a handful of tensor operations over all points of all batches at
once, with no host synchronisation.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from ._autograd import op_function
from ._points_common import check, check_points

__all__ = [
    "FurthestPointSampling",
    "FurthestPointSamplingWithDist",
    "furthest_point_sample",
    "furthest_point_sample_with_dist",
]


def _check_num(op: str, num_points: object) -> int:
    check(
        isinstance(num_points, int) and not isinstance(num_points, bool) and num_points >= 0,
        op,
        f"num_points must be an int >= 0, got {num_points!r}",
        TypeError if not isinstance(num_points, int) else ValueError,
    )
    assert isinstance(num_points, int)
    return num_points


def _sample(first_dist: Tensor, step_dist: Callable[[Tensor], Tensor], num_points: int) -> Tensor:
    """Run FPS from point 0; ``step_dist(last)`` gives ``(B, N)`` distances to the last picks."""
    batch, n = first_dist.shape
    out = torch.zeros(batch, num_points, dtype=torch.int32, device=first_dist.device)
    if num_points == 0 or n == 0:
        return out
    # mmcv starts every point at 1e10 ("infinitely far") and always picks point 0 first.
    nearest = torch.full_like(first_dist, 1e10)
    last = torch.zeros(batch, dtype=torch.long, device=first_dist.device)
    for j in range(1, num_points):
        torch.minimum(nearest, step_dist(last), out=nearest)
        last = nearest.argmax(1)
        out[:, j] = last
    return out


def furthest_point_sample(points_xyz: Tensor, num_points: int) -> Tensor:
    """Pick ``num_points`` points, each the furthest from those already picked.

    Starts at point 0; distances are squared Euclidean, in the input's dtype. Not
    differentiable (indices).

    Args:
        points_xyz: ``(B, N, 3)`` point coordinates.
        num_points: How many points to pick (``N`` or fewer; past ``N`` the picks repeat
            point 0, as mmcv's kernel does once every distance is zero).

    Returns:
        ``(B, num_points)`` int32 indices of the picked points.

    Raises:
        TypeError: When ``points_xyz`` is not a floating tensor or ``num_points`` not an int.
        AssertionError: When ``points_xyz`` is not ``(B, N, 3)``.
        ValueError: When ``num_points`` is negative.
    """
    op = "furthest_point_sample"
    check_points(points_xyz, op, "points_xyz", 3, 3)
    num_points = _check_num(op, num_points)
    planar = points_xyz.transpose(1, 2).contiguous()  # (B, 3, N): each axis one row
    rows = torch.arange(points_xyz.shape[0], device=points_xyz.device)
    diff = torch.empty_like(planar)
    dist = torch.empty_like(planar[:, 0])

    def step_dist(last: Tensor) -> Tensor:
        # (x2 - x1)^2 + (y2 - y1)^2 + (z2 - z1)^2 in this order, as mmcv's kernel sums it;
        # into preallocated buffers, as this runs once per sampled point.
        torch.sub(planar, points_xyz[rows, last].unsqueeze(2), out=diff)
        diff.mul_(diff)
        torch.add(diff[:, 0], diff[:, 1], out=dist)
        return dist.add_(diff[:, 2])

    with torch.no_grad():
        return _sample(planar[:, 0], step_dist, num_points)


def furthest_point_sample_with_dist(points_dist: Tensor, num_points: int) -> Tensor:
    """Furthest point sampling on a precomputed distance matrix.

    Args:
        points_dist: ``(B, N, N)`` distance between each pair of points.
        num_points: How many points to pick.

    Returns:
        ``(B, num_points)`` int32 indices of the picked points, starting with point 0.

    Raises:
        TypeError: When ``points_dist`` is not a floating tensor or ``num_points`` not an int.
        AssertionError: When ``points_dist`` is not ``(B, N, N)``.
        ValueError: When ``num_points`` is negative.
    """
    op = "furthest_point_sample_with_dist"
    check_points(points_dist, op, "points_dist", 3)
    check(
        points_dist.shape[1] == points_dist.shape[2],
        op,
        f"points_dist must be (B, N, N), got shape {tuple(points_dist.shape)}",
        AssertionError,
    )
    num_points = _check_num(op, num_points)
    rows = torch.arange(points_dist.shape[0], device=points_dist.device)
    with torch.no_grad():
        return _sample(points_dist[:, 0], lambda last: points_dist[rows, last], num_points)


FurthestPointSampling = op_function("FurthestPointSampling", furthest_point_sample, __name__)


FurthestPointSamplingWithDist = op_function(
    "FurthestPointSamplingWithDist", furthest_point_sample_with_dist, __name__
)
