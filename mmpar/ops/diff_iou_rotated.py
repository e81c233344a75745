"""Differentiable IoU of rotated 2-D and 3-D boxes, as mmcv's ``diff_iou_rotated_2d`` / ``_3d``.

mmcv sorts the intersection's vertices with a CUDA-only kernel; here the whole construction
is batched PyTorch (mmpar.ops._polygon) on any device, differentiable in both boxes through
the corner coordinates.

mmcv's module also exposes the steps of its construction, kept here with its semantics for
code that calls them: :func:`box_intersection` (edge crossings), :func:`box1_in_box2` /
:func:`box_in_box` (corners inside the other box), :func:`build_vertices` (the 24
candidates), :func:`sort_indices` / :class:`SortVertices` (the polygon's vertex order),
:func:`calculate_area` (shoelace) and :func:`oriented_box_intersection_2d` (all of them).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ._autograd import op_function
from ._polygon import convex_intersection_area

__all__ = [
    "EPSILON",
    "SortVertices",
    "box1_in_box2",
    "box2corners",
    "box_in_box",
    "box_intersection",
    "build_vertices",
    "calculate_area",
    "diff_iou_rotated_2d",
    "diff_iou_rotated_3d",
    "oriented_box_intersection_2d",
    "sort_indices",
]

#: mmcv's guard against division by zero (and its tolerance for equal vertices).
EPSILON = 1e-8
# Sorted indices per polygon: at most 8 vertices, then the first again.
_MAX_SORTED = 9
# Candidates before this index are box corners, the rest edge crossings.
_FIRST_CROSSING = 8


def box2corners(box: Tensor) -> Tensor:
    """Corners ``(B, N, 4, 2)`` of rotated boxes ``(B, N, 5)`` as ``(x, y, w, h, alpha)``."""
    x, y, w, h, alpha = box.unbind(-1)
    half_x = torch.stack([w, -w, -w, w], -1) * 0.5
    half_y = torch.stack([h, h, -h, -h], -1) * 0.5
    cos, sin = torch.cos(alpha)[..., None], torch.sin(alpha)[..., None]
    corner_x = half_x * cos - half_y * sin + x[..., None]
    corner_y = half_x * sin + half_y * cos + y[..., None]
    return torch.stack([corner_x, corner_y], -1)


def _check(name: str, box1: Tensor, box2: Tensor, width: int) -> None:
    if box1.dim() != 3 or box1.size(-1) != width or box1.shape != box2.shape:
        raise ValueError(
            f"{name}: both boxes must be (B, N, {width}) of the same shape, got "
            f"{tuple(box1.shape)} and {tuple(box2.shape)}"
        )


def _intersection(box1: Tensor, box2: Tensor) -> Tensor:
    # Shift each pair to the mean of its centres, for precision with large coordinates.
    shift = (box1[..., :2] + box2[..., :2]).detach() / 2
    corners1 = box2corners(torch.cat([box1[..., :2] - shift, box1[..., 2:]], -1))
    corners2 = box2corners(torch.cat([box2[..., :2] - shift, box2[..., 2:]], -1))
    return convex_intersection_area(corners1, corners2)


def diff_iou_rotated_2d(box1: Tensor, box2: Tensor) -> Tensor:
    """IoU of aligned pairs of rotated boxes, differentiable.

    Args:
        box1: ``(B, N, 5)`` as ``(x, y, w, h, alpha)``, alpha in radians.
        box2: ``(B, N, 5)``.

    Returns:
        ``(B, N)``: IoU of ``box1[b, n]`` with ``box2[b, n]``.

    Raises:
        ValueError: The boxes are not both ``(B, N, 5)``.
    """
    _check("diff_iou_rotated_2d", box1, box2, 5)
    intersection = _intersection(box1, box2)
    union = box1[..., 2] * box1[..., 3] + box2[..., 2] * box2[..., 3] - intersection
    return intersection / union


def diff_iou_rotated_3d(box3d1: Tensor, box3d2: Tensor) -> Tensor:
    """IoU of aligned pairs of 3-D boxes rotated about the vertical axis, differentiable.

    Args:
        box3d1: ``(B, N, 7)`` as ``(x, y, z, w, h, l, alpha)``: ``z`` is the centre height and
            ``l`` the vertical size.
        box3d2: ``(B, N, 7)``.

    Returns:
        ``(B, N)``: IoU (over volumes) of ``box3d1[b, n]`` with ``box3d2[b, n]``.

    Raises:
        ValueError: The boxes are not both ``(B, N, 7)``.
    """
    _check("diff_iou_rotated_3d", box3d1, box3d2, 7)
    footprint = [0, 1, 3, 4, 6]
    intersection = _intersection(box3d1[..., footprint], box3d2[..., footprint])
    top = torch.min(box3d1[..., 2] + box3d1[..., 5] * 0.5, box3d2[..., 2] + box3d2[..., 5] * 0.5)
    bottom = torch.max(box3d1[..., 2] - box3d1[..., 5] * 0.5, box3d2[..., 2] - box3d2[..., 5] * 0.5)
    intersection_3d = intersection * (top - bottom).clamp(min=0.0)
    volume1 = box3d1[..., 3] * box3d1[..., 4] * box3d1[..., 5]
    volume2 = box3d2[..., 3] * box3d2[..., 4] * box3d2[..., 5]
    return intersection_3d / (volume1 + volume2 - intersection_3d)


def box_intersection(corners1: Tensor, corners2: Tensor) -> tuple[Tensor, Tensor]:
    """Crossing points of each edge of one box with each edge of the other.

    Edge ``i`` runs from corner ``i`` to corner ``i + 1``. Parallel (and collinear) edges do
    not cross, nor do edges that only touch at an end. Unlike mmcv, edges parallel within
    rounding (relative to their lengths) count as parallel, and a crossing is placed at its
    exact parameter (mmcv adds ``EPSILON`` to the divisor, which throws the crossing of two
    nearly parallel edges far off them).

    Args:
        corners1: ``(B, N, 4, 2)`` corners of the first boxes.
        corners2: ``(B, N, 4, 2)`` corners of the second boxes.

    Returns:
        ``(points, valid)``: ``(B, N, 4, 4, 1, 2)`` crossing of edge ``i`` of box 1 with edge
        ``j`` of box 2 (zeros where they do not cross, with zero gradient) and the
        ``(B, N, 4, 4, 1)`` mask of real crossings. The singleton dimension is mmcv's (its
        docstring says ``(B, N, 4, 4, 2)``; its code keeps a split's size-1 dimension).
    """
    start1, end1 = corners1.unsqueeze(3), corners1.roll(-1, dims=2).unsqueeze(3)
    start2, end2 = corners2.unsqueeze(2), corners2.roll(-1, dims=2).unsqueeze(2)
    dir1, dir2 = end1 - start1, end2 - start2  # (B, N, 4, 1, 2), (B, N, 1, 4, 2)
    gap = start2 - start1
    # start1 + t * dir1 == start2 + u * dir2, by Cramer's rule.
    det = dir1[..., 0] * dir2[..., 1] - dir1[..., 1] * dir2[..., 0]
    t_num = gap[..., 0] * dir2[..., 1] - gap[..., 1] * dir2[..., 0]
    u_num = gap[..., 0] * dir1[..., 1] - gap[..., 1] * dir1[..., 0]
    # Parallel relative to the edges' lengths: mmcv tests det == 0, which rounding misses for
    # collinear edges (their "crossing" then lands anywhere along them).
    lengths = dir1.norm(dim=-1) * dir2.norm(dim=-1)
    crossing = det.abs() > lengths * (torch.finfo(det.dtype).eps * 64)
    safe = torch.where(crossing, det, torch.ones_like(det))
    t, u = t_num / safe, u_num / safe
    valid = crossing & (t > 0) & (t < 1) & (u > 0) & (u < 1)
    # mmcv places the point with t_num / (det + EPSILON); near-parallel edges (det close to
    # EPSILON) then land far off both edges, so here the point is at the exact t.
    points = start1 + t.unsqueeze(-1) * dir1
    points = points * valid.unsqueeze(-1).to(points.dtype)
    return points.unsqueeze(-2), valid.unsqueeze(-1)


def box1_in_box2(corners1: Tensor, corners2: Tensor) -> Tensor:
    """Whether each corner of box 1 lies in box 2 (on an edge counts as in).

    Args:
        corners1: ``(B, N, 4, 2)`` corners of the first boxes.
        corners2: ``(B, N, 4, 2)`` corners of the second boxes.

    Returns:
        ``(B, N, 4)`` booleans.
    """
    origin = corners2[:, :, 0:1]
    side_a = corners2[:, :, 1:2] - origin  # (B, N, 1, 2)
    side_b = corners2[:, :, 3:4] - origin
    rel = corners1 - origin  # (B, N, 4, 2)
    inside = torch.ones(rel.shape[:-1], dtype=torch.bool, device=rel.device)
    for side in (side_a, side_b):
        # The corner's coordinate along the side, as a fraction of its length: in [0, 1].
        frac = (side * rel).sum(-1) / (side * side).sum(-1)
        inside = inside & (frac > -1e-6) & (frac < 1 + 1e-6)
    return inside


def box_in_box(corners1: Tensor, corners2: Tensor) -> tuple[Tensor, Tensor]:
    """:func:`box1_in_box2` both ways: ``(corners of 1 in 2, corners of 2 in 1)``, ``(B, N, 4)``."""
    return box1_in_box2(corners1, corners2), box1_in_box2(corners2, corners1)


def build_vertices(
    corners1: Tensor,
    corners2: Tensor,
    c1_in_2: Tensor,
    c2_in_1: Tensor,
    intersections: Tensor,
    valid_mask: Tensor,
) -> tuple[Tensor, Tensor]:
    """The 24 candidate vertices of the intersection polygon, and which of them are vertices.

    Args:
        corners1: ``(B, N, 4, 2)`` corners of the first boxes.
        corners2: ``(B, N, 4, 2)`` corners of the second boxes.
        c1_in_2: ``(B, N, 4)``: which corners of box 1 are in box 2.
        c2_in_1: ``(B, N, 4)``: which corners of box 2 are in box 1.
        intersections: ``(B, N, 4, 4, 1, 2)`` edge crossings (:func:`box_intersection`).
        valid_mask: ``(B, N, 4, 4, 1)`` which crossings are real.

    Returns:
        ``(vertices, mask)``: ``(B, N, 24, 2)`` the corners of box 1, of box 2, then the 16
        crossings; ``(B, N, 24)`` which are vertices of the intersection.
    """
    batch, boxes = corners1.shape[:2]
    vertices = torch.cat([corners1, corners2, intersections.reshape(batch, boxes, 16, 2)], 2)
    mask = torch.cat([c1_in_2, c2_in_1, valid_mask.reshape(batch, boxes, 16)], 2)
    return vertices, mask


def _fit_slots(vertices: Tensor, order: Tensor, count: Tensor) -> Tensor:
    """The first 8 of ``order`` (the sorted vertices, ``count`` of them) as 8 real vertices.

    Nearly equal boxes give more than 8 candidates (crossings along nearly collinear edges,
    corners a rounding error apart), which mmcv's 9 slots cannot hold (its kernel writes past
    them). Such a polygon keeps the 8 vertices whose removal would change its area most (the
    others are on straight stretches or next to a near-repeat), in their order.
    """
    slots = _MAX_SORTED - 1
    points = vertices.gather(-2, order.unsqueeze(-1).expand_as(vertices))
    pos = torch.arange(order.size(-1), device=order.device)
    ring = count.clamp(min=1)
    before = points.gather(-2, ((pos - 1) % ring).unsqueeze(-1).expand_as(points))
    after = points.gather(-2, ((pos + 1) % ring).unsqueeze(-1).expand_as(points))
    in_edge, out_edge = points - before, after - points
    turn = (in_edge[..., 0] * out_edge[..., 1] - in_edge[..., 1] * out_edge[..., 0]).abs()
    turn = torch.where(pos < count, turn, torch.full_like(turn, -1.0))
    kept = turn.topk(slots, dim=-1).indices.sort(dim=-1).values
    return torch.where(count > slots, order.gather(-1, kept), order[..., :slots])


def _sort_vertices(vertices: Tensor, mask: Tensor, num_valid: Tensor) -> Tensor:
    """Mmcv's vertex-sorting kernel on ``vertices`` already centred on their valid mean."""
    x, y = vertices[..., 0], vertices[..., 1]
    # Counter-clockwise from the positive x axis: angles in [0, 2 pi), invalid ones last.
    angle = torch.atan2(y, x).remainder(2 * math.pi)
    angle = torch.where(mask, angle, torch.full_like(angle, math.inf))
    order = angle.argsort(dim=-1, stable=True)
    taken = mask.gather(-1, order)
    points = vertices.gather(-2, order.unsqueeze(-1).expand_as(vertices))
    # A vertex equal to the one before it is dropped: two equal boxes give each corner twice
    # (mmcv's kernel drops those), and nearly equal ones a corner and a crossing a rounding
    # error apart (within 1e-6 of the polygon's size, as float32 kernels cannot tell them).
    size = (points.detach().abs().amax(-1) * taken).amax(-1, keepdim=True)
    close = torch.clamp(size * 1e-6, min=EPSILON)
    gap = (points[..., 1:, :] - points[..., :-1, :]).detach().abs().amax(-1)
    keep = taken & torch.cat([torch.ones_like(taken[..., :1]), gap >= close], -1)
    order = order.gather(-1, (~keep).to(torch.int8).argsort(dim=-1, stable=True))
    count = keep.sum(-1, keepdim=True)
    # The same across the seam: the last vertex against the first.
    first = vertices.gather(-2, order[..., :1, None].expand(*order.shape[:-1], 1, 2))
    last_pos = (count - 1).clamp(min=0)
    last = vertices.gather(-2, order.gather(-1, last_pos)[..., None].expand_as(first))
    seam = (last - first).detach().abs().amax(-1) < close
    count = count - (seam & (count > 1)).long()
    order = _fit_slots(vertices, order, count)
    count = count.clamp(max=_MAX_SORTED - 1)
    # Padding: the first crossing that is not a vertex (a zero point with zero gradient).
    pad = (~mask[..., _FIRST_CROSSING:]).to(torch.int8).argmax(-1, keepdim=True) + _FIRST_CROSSING
    slot = torch.arange(_MAX_SORTED, device=vertices.device)
    idx = torch.where(slot < count, torch.cat([order, order[..., :1]], -1), pad)
    idx = torch.where(slot == count, order[..., :1], idx)  # close the polygon
    idx = torch.where(num_valid.unsqueeze(-1) < 3, pad, idx)
    return idx.to(torch.int32)


SortVertices = op_function(
    "SortVertices",
    _sort_vertices,
    __name__,
    doc="""mmcv's autograd function of its vertex-sorting kernel (indices: no gradient).

    ``apply(vertices, mask, num_valid)`` takes ``(B, N, 24, 2)`` candidates centred on the
    mean of the valid ones, their ``(B, N, 24)`` mask and ``(B, N)`` count, and gives
    ``(B, N, 9)`` int32 indices: the valid vertices counter-clockwise from the positive x
    axis, the first again, then a padding index (a crossing that is not a vertex). Fewer
    than three valid vertices give only padding.
    """,
)


def sort_indices(vertices: Tensor, mask: Tensor) -> Tensor:
    """The intersection polygon's vertex order: ``(B, N, 9)`` indices into ``vertices``.

    Args:
        vertices: ``(B, N, 24, 2)`` candidates (:func:`build_vertices`).
        mask: ``(B, N, 24)`` which are vertices.

    Returns:
        ``(B, N, 9)`` int64 indices, as :class:`SortVertices` gives them.
    """
    num_valid = mask.int().sum(2)
    weight = mask.to(vertices.dtype).unsqueeze(-1)
    mean = (vertices * weight).sum(2, keepdim=True) / num_valid[..., None, None]
    return SortVertices.apply(vertices - mean, mask, num_valid).long()


def calculate_area(idx_sorted: Tensor, vertices: Tensor) -> tuple[Tensor, Tensor]:
    """Shoelace area of the polygons the sorted indices trace.

    Args:
        idx_sorted: ``(B, N, 9)`` vertex indices (:func:`sort_indices`).
        vertices: ``(B, N, 24, 2)`` candidates.

    Returns:
        ``(area, polygon)``: ``(B, N)`` areas and the ``(B, N, 9, 2)`` traced vertices.
    """
    polygon = vertices.gather(2, idx_sorted.unsqueeze(-1).expand(-1, -1, -1, 2))
    start, end = polygon[:, :, :-1], polygon[:, :, 1:]
    twice = (start[..., 0] * end[..., 1] - start[..., 1] * end[..., 0]).sum(2)
    return twice.abs() / 2, polygon


def oriented_box_intersection_2d(corners1: Tensor, corners2: Tensor) -> tuple[Tensor, Tensor]:
    """Intersection area of pairs of rotated boxes, by mmcv's steps.

    Args:
        corners1: ``(B, N, 4, 2)`` corners of the first boxes.
        corners2: ``(B, N, 4, 2)`` corners of the second boxes.

    Returns:
        ``(area, polygon)`` as :func:`calculate_area`.
    """
    crossings, crossing_mask = box_intersection(corners1, corners2)
    c12, c21 = box_in_box(corners1, corners2)
    vertices, mask = build_vertices(corners1, corners2, c12, c21, crossings, crossing_mask)
    return calculate_area(sort_indices(vertices, mask), vertices)
