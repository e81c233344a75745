"""Minimum-area enclosing rectangles of point sets, as mmcv's ``min_area_polygons``.

Batched on any device: the convex hull of each set of 9 points (mmpar.ops._polygon), then the
rectangle aligned with each hull edge (rotating calipers: the minimum-area rectangle has a side
on a hull edge), keeping the smallest. mmcv has this op on CUDA only; the corner order follows
its kernel.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ._polygon import convex_hull

__all__ = ["min_area_polygons"]


def min_area_polygons(pointsets: Tensor) -> Tensor:
    """Smallest rectangle around each set of 9 points.

    Args:
        pointsets: ``(N, 18)`` as ``(x1, y1, ..., x9, y9)``.

    Returns:
        ``(N, 8)``: the rectangles' corners ``(x1, y1, ..., x4, y4)``. With the rectangle's
        frame turned by its angle ``a`` in ``[0, pi/2)``, the corners are
        ``(max u, min v), (min u, min v), (min u, max v), (max u, max v)``, as mmcv.

    Raises:
        ValueError: ``pointsets`` is not ``(N, 18)``.
    """
    if pointsets.dim() != 2 or pointsets.size(1) != 18:
        raise ValueError(
            f"min_area_polygons: pointsets must be (N, 18), got {tuple(pointsets.shape)}"
        )
    if pointsets.size(0) == 0:
        return pointsets.new_zeros((0, 8))
    points = pointsets.detach().unflatten(-1, (9, 2))
    hull = convex_hull(points)  # (N, 9, 2), padded
    edges = hull.roll(-1, dims=-2) - hull
    real = edges.abs().amax(-1) > 0
    angle = torch.atan2(edges[..., 1], edges[..., 0])
    quarter = math.pi / 2
    # mmcv folds each edge's angle into [0, pi/2) (C's fmod and truncation).
    angle = torch.where(
        angle >= 0, torch.fmod(angle, quarter), angle - torch.trunc(angle / quarter - 1) * quarter
    )
    cos, sin = torch.cos(angle), torch.sin(angle)  # (N, E)
    # Frame of each candidate: u = cos x + sin y, v = -sin x + cos y.
    u = cos[..., None] * points[:, None, :, 0] + sin[..., None] * points[:, None, :, 1]
    v = -sin[..., None] * points[:, None, :, 0] + cos[..., None] * points[:, None, :, 1]
    u_min, u_max = u.amin(-1), u.amax(-1)
    v_min, v_max = v.amin(-1), v.amax(-1)
    area = (u_max - u_min) * (v_max - v_min)
    area = torch.where(real, area, torch.full_like(area, math.inf))
    best = area.argmin(-1, keepdim=True)

    def pick(value: Tensor) -> Tensor:
        return value.gather(-1, best).squeeze(-1)

    c, s = pick(cos), pick(sin)
    corners_u = torch.stack([pick(u_max), pick(u_min), pick(u_min), pick(u_max)], -1)
    corners_v = torch.stack([pick(v_min), pick(v_min), pick(v_max), pick(v_max)], -1)
    x = corners_u * c[:, None] - corners_v * s[:, None]
    y = corners_u * s[:, None] + corners_v * c[:, None]
    return torch.stack([x, y], -1).flatten(1).to(pointsets.dtype)
