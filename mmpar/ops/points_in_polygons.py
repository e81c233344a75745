"""Point-in-quadrilateral test, as mmcv's ``points_in_polygons`` (ATSS assignment of rotated boxes).

Every point against every polygon at once, on any device, with mmcv's crossing-number rule in
float32: a horizontal ray to the right of the point crosses the edges an odd number of times
when it is inside; a point on a vertex, or on an edge where the ray meets it, stops the count
(so boundary points are 1 or 0 depending on which edge is met first, as in mmcv).
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["points_in_polygons"]


def points_in_polygons(points: Tensor, polygons: Tensor) -> Tensor:
    """Which points lie inside which quadrilaterals.

    Args:
        points: ``(B, 2)`` as ``(x, y)``.
        polygons: ``(M, 8)`` as ``(x1, y1, ..., x4, y4)``.

    Returns:
        ``(B, M)`` float32: 1 where the point is inside the polygon, else 0. Points exactly on
        the boundary may go either way (as mmcv documents).

    Raises:
        AssertionError: ``points`` is not ``(B, 2)`` or ``polygons`` not ``(M, 8)`` (as mmcv).
    """
    assert points.dim() == 2 and points.shape[1] == 2, (
        f"points_in_polygons: points must be (B, 2), got {tuple(points.shape)}"
    )
    assert polygons.dim() == 2 and polygons.shape[1] == 8, (
        f"points_in_polygons: polygons must be (M, 8), got {tuple(polygons.shape)}"
    )
    # mmcv's kernel computes in C float.
    px = points[:, 0].float()[:, None, None]
    py = points[:, 1].float()[:, None, None]
    vertices = polygons.to(device=points.device, dtype=torch.float32).reshape(1, -1, 4, 2)
    # Edge e runs from vertex e (s) to vertex e - 1 (t), in mmcv's order.
    sx, sy = vertices[..., 0], vertices[..., 1]
    tx, ty = sx.roll(1, dims=-1), sy.roll(1, dims=-1)
    in_band = (py >= torch.minimum(sy, ty)) & (py <= torch.maximum(sy, ty))
    on_vertex = ((sx == px) & (sy == py)) | ((tx == px) & (ty == py))
    straddles = ((sy < py) & (ty >= py)) | ((sy >= py) & (ty < py))
    dy = torch.where(ty == sy, torch.ones_like(ty), ty - sy)
    x = sx + (py - sy) * (tx - sx) / dy
    stop = in_band & (on_vertex | (straddles & (x == px)))
    crosses = in_band & ~on_vertex & straddles & (x > px)
    # The count ends at the first edge that stops it.
    before_stop = (stop.cumsum(-1) - stop.int()) == 0
    count = (crosses & before_stop & ~stop).sum(-1)
    return (count % 2).float()
