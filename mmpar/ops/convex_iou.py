"""IoU / GIoU of point sets' convex hulls with quadrilaterals: ``convex_iou``, ``convex_giou``.

mmcv uses these in the losses and assigners of oriented RepPoints.

Batched on any device (mmpar.ops._polygon): the hull of each set of 9 points, intersected with
the quadrilateral. mmcv has these on CUDA only. ``convex_giou`` also returns the gradient of the
GIoU with respect to the points, as mmcv's kernel does; here it comes from autograd through the
same geometry.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._polygon import (
    convex_hull,
    convex_intersection_area,
    counter_clockwise,
    enclosing_circles,
    pairwise_iou,
    signed_area,
)

__all__ = ["convex_giou", "convex_iou"]


def _check(name: str, pointsets: Tensor, polygons: Tensor) -> None:
    if pointsets.dim() != 2 or pointsets.size(1) != 18:
        raise ValueError(f"{name}: pointsets must be (N, 18), got {tuple(pointsets.shape)}")
    if polygons.dim() != 2 or polygons.size(1) != 8:
        raise ValueError(f"{name}: polygons must be (K, 8), got {tuple(polygons.shape)}")


def _hull_and_polygon(hulls: Tensor, polygons: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    hull = hulls.unflatten(-1, (9, 2))
    quad = polygons.unflatten(-1, (4, 2))
    shift = (hull.mean(-2, keepdim=True) + quad.mean(-2, keepdim=True)) / 2
    hull = hull - shift
    quad = counter_clockwise(quad - shift)
    return hull, quad, signed_area(hull), signed_area(quad)


def _circles(boxes: Tensor) -> tuple[Tensor, Tensor]:
    return enclosing_circles(boxes.unflatten(-1, (-1, 2)))


def convex_iou(pointsets: Tensor, polygons: Tensor) -> Tensor:
    """IoU of the convex hull of each point set with each quadrilateral.

    Args:
        pointsets: ``(N, 18)`` as ``(x1, y1, ..., x9, y9)``.
        polygons: ``(K, 8)`` as ``(x1, y1, ..., x4, y4)``, convex, either orientation.

    Returns:
        ``(N, K)``; 0 where the hull or the polygon has no area (mmcv divides by zero there).

    Raises:
        ValueError: ``pointsets`` is not ``(N, 18)`` or ``polygons`` not ``(K, 8)``.
    """
    _check("convex_iou", pointsets, polygons)
    hulls = convex_hull(pointsets.unflatten(-1, (9, 2))).flatten(1)
    return pairwise_iou(_hull_and_polygon, _circles, hulls, polygons.to(hulls), "iou", False)


def _giou(points: Tensor, quad: Tensor) -> Tensor:
    hull = convex_hull(points)
    quad = counter_clockwise(quad)
    shift = (hull.mean(-2, keepdim=True) + quad.mean(-2, keepdim=True)) / 2
    hull, quad = hull - shift, quad - shift
    inter = convex_intersection_area(hull, quad)
    union = signed_area(hull) + signed_area(quad) - inter
    enclosing = signed_area(convex_hull(torch.cat([hull, quad], dim=-2)))
    return inter / union - (enclosing - union) / enclosing


def convex_giou(pointsets: Tensor, polygons: Tensor) -> tuple[Tensor, Tensor]:
    """Generalized IoU of each point set's convex hull with its quadrilateral, and its gradient.

    Args:
        pointsets: ``(N, 18)`` as ``(x1, y1, ..., x9, y9)``.
        polygons: ``(N, 8)``, row ``i`` paired with point set ``i``.

    Returns:
        ``(giou (N,), grad (N, 18))``: the GIoU and its gradient with respect to
        ``pointsets`` (0 for points inside the hull), both without autograd history, as mmcv.

    Raises:
        ValueError: Bad shapes, or a different number of point sets and polygons.
    """
    _check("convex_giou", pointsets, polygons)
    if pointsets.size(0) != polygons.size(0):
        raise ValueError(
            f"convex_giou: needs one polygon per point set, got {pointsets.size(0)} and "
            f"{polygons.size(0)}"
        )
    with torch.enable_grad():
        points = pointsets.detach().unflatten(-1, (9, 2)).requires_grad_(True)
        quad = polygons.detach().to(points).unflatten(-1, (4, 2))
        giou = _giou(points, quad)
        (grad,) = (
            torch.autograd.grad(giou.sum(), points) if giou.numel() else (torch.zeros_like(points),)
        )
    return giou.detach(), grad.flatten(1)
