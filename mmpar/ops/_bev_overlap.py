"""Intersection areas of rotated rectangles in bird's-eye view, vectorized over box pairs.

Each pair's overlap is a convex polygon whose vertices are among 24 candidates: the corners of
each box inside the other and the crossings of their edges. The valid candidates are sorted
by angle around their mean and the polygon's area taken with the shoelace formula; invalid
candidates repeat the first vertex, which adds nothing. Only pairs whose circumscribed circles
meet are computed; the others do not overlap.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["greedy_keep", "overlap_matrix", "rotated_corners"]

# Pairs computed at once (each takes a few hundred floats of temporaries).
_PAIRS_PER_CHUNK = 1 << 15


def rotated_corners(boxes: Tensor) -> Tensor:
    """``(N, 4, 2)`` corners, counter-clockwise, of ``(N, 5)`` boxes ``(x, y, w, h, angle)``.

    The box is rotated by ``angle`` (radians) counter-clockwise in (x, y), as mmcv's
    ``box_iou_rotated`` and ``iou3d`` kernels rotate it.
    """
    x, y, w, h, a = boxes.unbind(-1)
    cos, sin = torch.cos(a), torch.sin(a)
    sx = torch.stack([-w, w, w, -w], -1) / 2
    sy = torch.stack([-h, -h, h, h], -1) / 2
    cx = x.unsqueeze(-1) + sx * cos.unsqueeze(-1) - sy * sin.unsqueeze(-1)
    cy = y.unsqueeze(-1) + sx * sin.unsqueeze(-1) + sy * cos.unsqueeze(-1)
    return torch.stack([cx, cy], -1)


def _cross(a: Tensor, b: Tensor) -> Tensor:
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def _inside(points: Tensor, poly: Tensor, tol: Tensor) -> Tensor:
    """Whether each of ``(P, K, 2)`` points is in the CCW ``(P, 4, 2)`` polygon (within tol)."""
    edges = poly.roll(-1, dims=1) - poly  # (P, 4, 2)
    rel = points.unsqueeze(2) - poly.unsqueeze(1)  # (P, K, 4, 2)
    return (_cross(edges.unsqueeze(1), rel) >= -tol[:, None, None]).all(-1)


def _pair_areas(ca: Tensor, cb: Tensor) -> Tensor:
    """Intersection areas of ``P`` pairs of CCW quadrilaterals ``(P, 4, 2)``."""
    # Work around the pair's midpoint, so the cancellations in the cross products stay small.
    centre = (ca.mean(1, keepdim=True) + cb.mean(1, keepdim=True)) / 2
    ca, cb = ca - centre, cb - centre
    scale = torch.maximum(ca.abs().amax((1, 2)), cb.abs().amax((1, 2)))
    eps = torch.finfo(ca.dtype).eps
    tol = scale * scale * (64 * eps)  # cross products scale with squared lengths
    # Edge crossings: p + t r = q + u s with t, u in [0, 1].
    p, r = ca.unsqueeze(2), (ca.roll(-1, 1) - ca).unsqueeze(2)  # (P, 4, 1, 2)
    q, s = cb.unsqueeze(1), (cb.roll(-1, 1) - cb).unsqueeze(1)  # (P, 1, 4, 2)
    denom = _cross(r, s)
    qp = q - p
    safe = torch.where(denom.abs() > tol[:, None, None], denom, torch.ones_like(denom))
    t = _cross(qp, s) / safe
    u = _cross(qp, r) / safe
    slack = 16 * eps
    crossing = (
        (denom.abs() > tol[:, None, None])
        & (t >= -slack)
        & (t <= 1 + slack)
        & (u >= -slack)
        & (u <= 1 + slack)
    )
    hits = (p + t.unsqueeze(-1) * r).reshape(-1, 16, 2)
    points = torch.cat([ca, cb, hits], 1)  # (P, 24, 2)
    valid = torch.cat([_inside(ca, cb, tol), _inside(cb, ca, tol), crossing.reshape(-1, 16)], 1)
    count = valid.sum(1, keepdim=True)
    weights = valid.to(points.dtype).unsqueeze(-1)
    mean = (points * weights).sum(1, keepdim=True) / count.clamp(min=1).unsqueeze(-1)
    rel = points - mean
    angle = torch.atan2(rel[..., 1], rel[..., 0])
    angle = torch.where(valid, angle, torch.full_like(angle, 10.0))  # invalid ones last
    order = angle.argsort(1)
    rel = rel.gather(1, order.unsqueeze(-1).expand_as(rel))
    valid = valid.gather(1, order)
    rel = torch.where(valid.unsqueeze(-1), rel, rel[:, :1])
    area = _cross(rel, rel.roll(-1, 1)).sum(1) / 2
    return torch.where(count.squeeze(1) >= 3, area.abs(), torch.zeros_like(area))


def overlap_matrix(boxes_a: Tensor, boxes_b: Tensor, upper_only: bool = False) -> Tensor:
    """``(M, N)`` intersection areas of ``(M, 5)`` and ``(N, 5)`` boxes ``(x, y, w, h, angle)``.

    Args:
        boxes_a: First boxes.
        boxes_b: Second boxes.
        upper_only: Compute only pairs ``i < j`` (both sets the same, for NMS); the rest is 0.
    """
    m, n = boxes_a.shape[0], boxes_b.shape[0]
    out = boxes_a.new_zeros((m, n))
    if m == 0 or n == 0:
        return out
    radius_a = torch.hypot(boxes_a[:, 2], boxes_a[:, 3]) / 2
    radius_b = torch.hypot(boxes_b[:, 2], boxes_b[:, 3]) / 2
    gap = torch.cdist(boxes_a[:, :2].unsqueeze(0), boxes_b[:, :2].unsqueeze(0))[0]
    near = gap <= (radius_a[:, None] + radius_b[None, :]) * (1 + 1e-4)
    if upper_only:
        near = near.triu(1)
    rows, cols = near.nonzero(as_tuple=True)
    corners_a, corners_b = rotated_corners(boxes_a), rotated_corners(boxes_b)
    for start in range(0, rows.numel(), _PAIRS_PER_CHUNK):
        i = rows[start : start + _PAIRS_PER_CHUNK]
        j = cols[start : start + _PAIRS_PER_CHUNK]
        out[i, j] = _pair_areas(corners_a[i], corners_b[j])
    return out


def greedy_keep(suppresses: Tensor) -> Tensor:
    """Greedy NMS on a score-sorted ``(N, N)`` matrix: ``suppresses[i, j]`` for ``i < j``.

    Box ``j`` is kept when no kept box before it suppresses it. Boxes that suppress nothing
    and are suppressed by nothing are kept outright; on the rest, each pass recomputes every
    box's fate from the previous pass. Box ``k`` is final after ``k`` passes, and a pass that
    changes nothing is the unique fixed point, so the loop ends after as many passes as the
    longest chain of suppressions (a few in practice), each one matrix-wide operation.

    Returns:
        ``(N,)`` booleans: which boxes are kept.
    """
    n = suppresses.shape[0]
    keep = torch.ones(n, dtype=torch.bool, device=suppresses.device)
    suppresses = suppresses.triu(1)
    involved = (suppresses.any(0) | suppresses.any(1)).nonzero(as_tuple=True)[0]
    sub = suppresses[involved][:, involved]
    sub_keep = torch.ones(len(involved), dtype=torch.bool, device=suppresses.device)
    for _ in range(len(involved)):
        new = ~(sub & sub_keep.unsqueeze(1)).any(0)
        if torch.equal(new, sub_keep):
            break
        sub_keep = new
    keep[involved] = sub_keep
    return keep
