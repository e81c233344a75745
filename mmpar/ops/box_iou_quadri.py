"""IoU of convex quadrilaterals ``(x1, y1, ..., x4, y4)``, as mmcv's ``box_iou_quadri``.

Batched PyTorch on any device (mmpar.ops._polygon). Each pair is shifted to the mean of its
eight corners first, as mmcv does. Deliberate difference: mmcv's kernel tests whether a corner
lies inside the other quadrilateral by projecting it on that one's first two edges, which is
exact for rectangles only (a corner inside a skewed quadrilateral can be missed); this tests the
quadrilateral itself, so its IoU is exact for every convex quadrilateral (as shapely's).
"""

from __future__ import annotations

from torch import Tensor

from ._polygon import counter_clockwise, enclosing_circles, pairwise_iou, signed_area
from .box_iou_rotated import check_iou_args

__all__ = ["box_iou_quadri"]


def quadri_corners(boxes1: Tensor, boxes2: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Counter-clockwise corners of quadrilateral pairs around their mean, and areas."""
    poly1 = boxes1.unflatten(-1, (4, 2))
    poly2 = boxes2.unflatten(-1, (4, 2))
    shift = (poly1.sum(-2, keepdim=True) + poly2.sum(-2, keepdim=True)) / 8
    poly1 = counter_clockwise(poly1 - shift)
    poly2 = counter_clockwise(poly2 - shift)
    area1, area2 = signed_area(poly1), signed_area(poly2)
    return poly1, poly2, area1, area2


def quadri_circles(boxes: Tensor) -> tuple[Tensor, Tensor]:
    """Circles around quadrilaterals ``(K, 8)``."""
    return enclosing_circles(boxes.unflatten(-1, (4, 2)))


def box_iou_quadri(
    bboxes1: Tensor, bboxes2: Tensor, mode: str = "iou", aligned: bool = False
) -> Tensor:
    """Intersection over union (or over foreground) of convex quadrilaterals.

    Args:
        bboxes1: Quadrilaterals ``(N, 8)`` as ``x1, y1, ..., x4, y4`` (either orientation).
        bboxes2: Quadrilaterals ``(M, 8)`` (``M == N`` when ``aligned``).
        mode: ``'iou'`` or ``'iof'`` (intersection over the ``bboxes1`` box's area).
        aligned: Compare row ``i`` with row ``i`` only.

    Returns:
        ``(N, M)``, or ``(N,)`` when ``aligned``, in the boxes' dtype; 0 for a pair where a box
        has no area.

    Raises:
        AssertionError: ``mode`` is not ``'iou'`` or ``'iof'`` (as mmcv).
        ValueError: A box tensor is not ``(K, 8)``, or ``aligned`` with ``N != M``.
        TypeError: A box tensor is not a floating-point tensor.
    """
    check_iou_args("box_iou_quadri", bboxes1, bboxes2, 8, mode, aligned)
    return pairwise_iou(quadri_corners, quadri_circles, bboxes1, bboxes2.to(bboxes1), mode, aligned)
