"""Intersection areas of rotated rectangles in bird's-eye view, and greedy NMS on them.

The areas are those of the rotated-box IoU (mmpar.ops._polygon): each pair's overlap is a
convex polygon of the crossings of the two boundaries and the corners of each box inside the
other, measured only for pairs whose circumscribed circles meet.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._polygon import pairwise_iou
from .box_iou_rotated import rotated_circles, rotated_corners

__all__ = ["greedy_keep", "overlap_matrix"]


def overlap_matrix(boxes_a: Tensor, boxes_b: Tensor, upper_only: bool = False) -> Tensor:
    """``(M, N)`` intersection areas of ``(M, 5)`` and ``(N, 5)`` boxes ``(x, y, w, h, angle)``.

    The box is rotated by ``angle`` (radians) counter-clockwise in (x, y), as mmcv's
    ``box_iou_rotated`` and ``iou3d`` kernels rotate it; the areas are the rotated-box IoU's
    intersections (:func:`mmpar.ops._polygon.pairwise_iou`).

    Args:
        boxes_a: First boxes.
        boxes_b: Second boxes.
        upper_only: Compute only pairs ``i < j`` (both sets the same, for NMS); the rest is 0.
    """
    return pairwise_iou(
        rotated_corners, rotated_circles, boxes_a, boxes_b, "area", False, upper_only
    )


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
