"""Batched convex-polygon geometry for the rotated / quadrilateral / polygon ops.

Polygons are tensors ``(..., n, 2)`` of vertices. Everything is batched tensor code (the only
loops are over a polygon's few vertices, inside broadcasting), differentiable where the
geometry is (through the vertex coordinates; the combinatorial choices are not), and runs on
the input's device.

The intersection of two convex polygons follows the construction of mmcv's kernels: its
vertices are the crossings of the two boundaries plus each polygon's vertices that lie inside
the other; ordered by angle around their mean (they are the vertices of a convex polygon), the
shoelace formula gives the area. Points that are not vertices are padded with the first
vertex, which adds zero-area terms, so every polygon of a batch has the same vertex count.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor


def cross(a: Tensor, b: Tensor) -> Tensor:
    """The 2-D cross product ``a.x * b.y - a.y * b.x`` over the last dimension."""
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def rotated_box_corners(boxes: Tensor) -> Tensor:
    """Corners ``(..., 4, 2)`` of rotated boxes ``(..., 5)`` as ``(x, y, w, h, angle)``.

    The angle is in radians, clockwise in image coordinates (y pointing down), as mmcv's
    kernels take it; the corners come out counter-clockwise in the x-right / y-up sense (a
    positive shoelace area) when ``w`` and ``h`` are positive.
    """
    x, y, w, h, angle = boxes.unbind(-1)
    half_cos = torch.cos(angle) * 0.5
    half_sin = torch.sin(angle) * 0.5
    # Corner 0 and 1 from the centre; 2 and 3 are their reflections through the centre.
    x0 = x - half_sin * h - half_cos * w
    y0 = y + half_cos * h - half_sin * w
    x1 = x + half_sin * h - half_cos * w
    y1 = y - half_cos * h - half_sin * w
    xs = torch.stack([x0, x1, 2 * x - x0, 2 * x - x1], dim=-1)
    ys = torch.stack([y0, y1, 2 * y - y0, 2 * y - y1], dim=-1)
    return torch.stack([xs, ys], dim=-1)


def signed_area(poly: Tensor) -> Tensor:
    """Shoelace area ``(...)`` of polygons ``(..., n, 2)``: positive when counter-clockwise."""
    return 0.5 * cross(poly, poly.roll(-1, dims=-2)).sum(-1)


def counter_clockwise(poly: Tensor) -> Tensor:
    """The polygons ``(..., n, 2)`` with the vertex order reversed where it is clockwise."""
    flip = signed_area(poly) < 0
    return torch.where(flip[..., None, None], poly.flip(-2), poly)


def order_around_mean(points: Tensor, valid: Tensor) -> Tensor:
    """Order the ``valid`` points of each set by angle around their mean, padding the rest.

    Args:
        points: Point sets ``(..., n, 2)``.
        valid: Which points count ``(..., n)``.

    Returns:
        ``(..., n, 2)``: the valid points by increasing angle (counter-clockwise), then copies
        of the first of them, so the shoelace formula over all ``n`` gives the area of the
        valid points' polygon. A set without valid points becomes all zeros.
    """
    weight = valid.to(points.dtype)
    count = weight.sum(-1, keepdim=True).clamp_min(1)
    mean = (points * weight[..., None]).sum(-2, keepdim=True) / count[..., None]
    rel = (points - mean).detach()
    angle = torch.atan2(rel[..., 1], rel[..., 0])
    angle = torch.where(valid, angle, torch.full_like(angle, 10.0))  # past pi: invalid last
    order = angle.argsort(dim=-1)
    ordered = points.gather(-2, order[..., None].expand_as(points))
    ordered_valid = valid.gather(-1, order)
    first = ordered[..., :1, :]
    ordered = torch.where(ordered_valid[..., None], ordered, first)
    return ordered * (count[..., None] > 0).to(points.dtype)


def _inside_convex(points: Tensor, poly: Tensor, scale: Tensor) -> Tensor:
    """Which ``points (..., k, 2)`` are inside (or on) the counter-clockwise ``poly (..., n, 2)``.

    ``scale`` ``(...)`` is the pair's length scale: a point within a rounding error of an edge
    counts as on it.
    """
    edges = poly.roll(-1, dims=-2) - poly  # (..., n, 2)
    rel = points[..., :, None, :] - poly[..., None, :, :]  # (..., k, n, 2)
    side = cross(edges[..., None, :, :], rel)  # (..., k, n); >= 0 inside
    tol = -(scale * scale * (torch.finfo(poly.dtype).eps * 16))[..., None, None]
    return (side >= tol).all(-1)


def _boundary_crossings(poly1: Tensor, poly2: Tensor) -> tuple[Tensor, Tensor]:
    """Crossings of every edge of ``poly1 (..., n, 2)`` with every edge of ``poly2 (..., m, 2)``.

    Returns:
        ``(points (..., n*m, 2), valid (..., n*m))``; parallel edges give no point (their
        shared stretch, if any, is bounded by corners, which the inside tests contribute).
    """
    edge1 = poly1.roll(-1, dims=-2) - poly1
    edge2 = poly2.roll(-1, dims=-2) - poly2
    e1 = edge1[..., :, None, :]
    e2 = edge2[..., None, :, :]
    between = poly2[..., None, :, :] - poly1[..., :, None, :]
    det = cross(e2, e1)
    # Parallel (or collinear) relative to the edges' lengths: mmcv's absolute 1e-14 lets
    # rounding noise through for collinear edges, whose "crossing" then lands anywhere.
    lengths = e1.norm(dim=-1) * e2.norm(dim=-1)
    parallel = det.abs() <= lengths * (torch.finfo(det.dtype).eps * 64) + 1e-30
    safe_det = torch.where(parallel, torch.ones_like(det), det)
    t1 = cross(e2, between) / safe_det
    t2 = cross(e1, between) / safe_det
    valid = ~parallel & (t1 >= 0) & (t1 <= 1) & (t2 >= 0) & (t2 <= 1)
    points = poly1[..., :, None, :] + e1 * t1[..., None]
    return points.flatten(-3, -2), valid.flatten(-2, -1)


def convex_intersection_area(poly1: Tensor, poly2: Tensor) -> Tensor:
    """Area ``(...)`` of the intersection of convex polygons ``(..., n, 2)`` and ``(..., m, 2)``.

    Both must be counter-clockwise (see :func:`counter_clockwise`); repeated vertices (padding)
    are allowed. Differentiable through the vertex coordinates.
    """
    scale = torch.cat([poly1, poly2], dim=-2).detach().abs().amax(dim=(-2, -1)).clamp_min(1e-30)
    crossings, crossing_valid = _boundary_crossings(poly1, poly2)
    inside1 = _inside_convex(poly1, poly2, scale)
    inside2 = _inside_convex(poly2, poly1, scale)
    points = torch.cat([crossings, poly1, poly2], dim=-2)
    valid = torch.cat([crossing_valid, inside1, inside2], dim=-1)
    ordered = order_around_mean(points, valid)
    area = signed_area(ordered)
    return torch.where(valid.sum(-1) > 2, area, torch.zeros_like(area)).clamp_min(0)


def convex_hull(points: Tensor) -> Tensor:
    """Convex hulls of point sets ``(..., n, 2)``, as counter-clockwise padded polygons.

    A point is a hull vertex when it starts an edge that has every point on its left (or on
    it); points on a hull edge and repeated points may stay as extra vertices, which leaves the
    hull's area and extent unchanged.

    Returns:
        ``(..., n, 2)``: the hull's vertices by angle, padded with the first (see
        :func:`order_around_mean`).
    """
    n = points.shape[-2]
    start = points[..., :, None, :]  # i
    end = points[..., None, :, :]  # j
    edge = end - start  # (..., n, n, 2)
    rel = points[..., None, None, :, :] - start[..., None, :]  # (..., n, n, n, 2): k - i
    side = cross(edge[..., None, :], rel)
    scale = points.detach().abs().amax(dim=(-2, -1)).clamp_min(1e-30)
    tol = -(scale * scale * (torch.finfo(points.dtype).eps * 64))[..., None, None, None]
    not_same = edge.detach().abs().amax(-1) > 0
    is_edge = (
        (side >= tol).all(-1) & not_same & ~torch.eye(n, dtype=torch.bool, device=points.device)
    )
    vertex = is_edge.any(-1)
    return order_around_mean(points, vertex)


# Pairs per batch of the IoU: bounds the memory of the (pairs, 24, 2) candidate points.
_PAIRS_PER_CHUNK = 1 << 15

CornersFn = Callable[[Tensor, Tensor], tuple[Tensor, Tensor, Tensor, Tensor]]


def enclosing_circles(poly: Tensor) -> tuple[Tensor, Tensor]:
    """A circle ``(center (..., 2), radius (...))`` around each polygon ``(..., n, 2)``."""
    center = poly.mean(-2)
    radius = (poly - center[..., None, :]).norm(dim=-1).amax(-1)
    return center, radius


def pairwise_iou(
    corners: CornersFn,
    circles: Callable[[Tensor], tuple[Tensor, Tensor]],
    boxes1: Tensor,
    boxes2: Tensor,
    mode: str,
    aligned: bool,
    upper_only: bool = False,
) -> Tensor:
    """IoU (IoF, or area) of convex boxes' overlaps, every pair or row ``i`` with row ``i``.

    Only the pairs whose enclosing circles meet are measured (the others are 0), in batches
    of a bounded size.

    Args:
        corners: Maps two box batches of the same shape to ``(poly1, poly2, area1, area2)``:
            their counter-clockwise corners ``(..., k, 2)`` (both shifted by the same per-pair
            offset, for precision) and areas ``(...)``.
        circles: Maps boxes ``(K, d)`` to enclosing circles ``(center (K, 2), radius (K,))``.
        boxes1: Boxes ``(N, d)``.
        boxes2: Boxes ``(M, d)``.
        mode: ``'iou'``, ``'iof'`` (over the area of the ``boxes1`` box) or ``'area'`` (the
            intersection area itself).
        aligned: Compare row ``i`` with row ``i`` only.
        upper_only: Measure only the pairs ``j > i`` (what greedy NMS reads); the rest are 0.

    Returns:
        ``(N, M)``, or ``(N,)`` when ``aligned``; 0 where either box has no area.
    """
    rows, cols = boxes1.size(0), boxes2.size(0)
    out = boxes1.new_zeros(rows if aligned else (rows, cols))
    if rows * cols == 0:
        return out
    with torch.no_grad():
        center1, radius1 = circles(boxes1)
        center2, radius2 = circles(boxes2)
        if aligned:
            dist = (center1 - center2).norm(dim=-1)
            reach = radius1 + radius2
        else:
            # Direct differences: the matrix-product form loses precision far from the origin.
            dist = torch.cdist(center1, center2, compute_mode="donot_use_mm_for_euclid_dist")
            reach = radius1[:, None] + radius2[None, :]
        # A little slack so rounding never drops a pair that touches.
        near = dist <= reach * (1 + 1e-5) + 1e-6
        if upper_only:
            near = near.triu(diagonal=1)
    flat = out.view(-1)
    pairs = near.view(-1).nonzero().squeeze(1)
    for start in range(0, pairs.numel(), _PAIRS_PER_CHUNK):
        chunk = pairs[start : start + _PAIRS_PER_CHUNK]
        first, second = (chunk, chunk) if aligned else (chunk // cols, chunk % cols)
        flat[chunk] = _iou(corners, boxes1[first], boxes2[second], mode)
    return out


def _iou(corners: CornersFn, boxes1: Tensor, boxes2: Tensor, mode: str) -> Tensor:
    poly1, poly2, area1, area2 = corners(boxes1, boxes2)
    inter = convex_intersection_area(poly1, poly2)
    if mode == "area":
        base = torch.ones_like(inter)
    else:
        base = area1 if mode == "iof" else area1 + area2 - inter
    degenerate = (area1 < 1e-14) | (area2 < 1e-14)
    safe_base = torch.where(degenerate, torch.ones_like(base), base)
    return torch.where(degenerate, torch.zeros_like(inter), inter / safe_base)
