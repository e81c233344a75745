"""IoU of rotated boxes ``(x, y, w, h, angle)``, as mmcv's ``box_iou_rotated``.

Batched PyTorch on any device (mmpar.ops._polygon): the same construction as mmcv's kernel
(boundary crossings plus contained corners, ordered, shoelace area), with each pair shifted to
the mean of its two centres first, as mmcv does, so large coordinates keep their precision.
Deliberate difference: edges count as parallel relative to their lengths, where mmcv's
absolute test (``|cross| <= 1e-14``) lets rounding noise make collinear edges (a box inside
another with a shared side line) "cross" anywhere along them, which can give a wrong IoU.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._polygon import pairwise_iou, rotated_box_corners

__all__ = ["box_iou_rotated"]


def check_boxes(name: str, what: str, boxes: Tensor, width: int) -> None:
    """Raise ``ValueError`` unless ``boxes`` is a floating tensor ``(N, width)``."""
    if not isinstance(boxes, Tensor):
        raise TypeError(f"{name}: {what} must be a torch.Tensor, got {type(boxes).__name__}")
    if boxes.dim() != 2 or boxes.size(1) != width:
        raise ValueError(f"{name}: {what} must have shape (N, {width}), got {tuple(boxes.shape)}")
    if not boxes.is_floating_point():
        raise TypeError(f"{name}: {what} must be a floating-point tensor, got {boxes.dtype}")


def rotated_corners(boxes1: Tensor, boxes2: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Corners of box pairs around their mean centre, and areas (for ``pairwise_iou``)."""
    shift = (boxes1[..., :2] + boxes2[..., :2]) / 2
    poly1 = rotated_box_corners(torch.cat([boxes1[..., :2] - shift, boxes1[..., 2:]], -1))
    poly2 = rotated_box_corners(torch.cat([boxes2[..., :2] - shift, boxes2[..., 2:]], -1))
    area1 = boxes1[..., 2] * boxes1[..., 3]
    area2 = boxes2[..., 2] * boxes2[..., 3]
    return poly1, poly2, area1, area2


def rotated_circles(boxes: Tensor) -> tuple[Tensor, Tensor]:
    """Circles around rotated boxes: their centres and half diagonals."""
    return boxes[:, :2], torch.hypot(boxes[:, 2], boxes[:, 3]) / 2


def box_iou_rotated(
    bboxes1: Tensor,
    bboxes2: Tensor,
    mode: str = "iou",
    aligned: bool = False,
    clockwise: bool = True,
) -> Tensor:
    """Intersection over union (or over foreground) of rotated boxes.

    Boxes are ``(x_center, y_center, w, h, angle)`` with the angle in radians; with
    ``clockwise=True`` (mmcv's default) a positive angle turns the box clockwise in image
    coordinates (y pointing down), with ``clockwise=False`` counter-clockwise.

    Args:
        bboxes1: Boxes ``(N, 5)``.
        bboxes2: Boxes ``(M, 5)`` (``M == N`` when ``aligned``).
        mode: ``'iou'`` or ``'iof'`` (intersection over the ``bboxes1`` box's area).
        aligned: Compare row ``i`` with row ``i`` only.
        clockwise: The angle's direction, see above.

    Returns:
        ``(N, M)``, or ``(N,)`` when ``aligned``, in the boxes' dtype; 0 for a pair where a box
        has no area (``w * h < 1e-14``).

    Raises:
        AssertionError: ``mode`` is not ``'iou'`` or ``'iof'`` (as mmcv).
        ValueError: A box tensor is not ``(K, 5)``, or ``aligned`` with ``N != M``.
        TypeError: A box tensor is not a floating-point tensor.
    """
    check_iou_args("box_iou_rotated", bboxes1, bboxes2, 5, mode, aligned)
    if not clockwise:
        # Mirroring the angle gives the same boxes in the other angular convention.
        flip = bboxes1.new_tensor([1, 1, 1, 1, -1])
        bboxes1, bboxes2 = bboxes1 * flip, bboxes2 * flip
    return pairwise_iou(
        rotated_corners, rotated_circles, bboxes1, bboxes2.to(bboxes1), mode, aligned
    )


def check_iou_args(
    name: str, bboxes1: Tensor, bboxes2: Tensor, width: int, mode: str, aligned: bool
) -> None:
    """Check the arguments of a box IoU op: shapes ``(K, width)``, mode, aligned counts."""
    assert mode in ("iou", "iof"), f"{name}: mode must be 'iou' or 'iof', got {mode!r}"
    check_boxes(name, "bboxes1", bboxes1, width)
    check_boxes(name, "bboxes2", bboxes2, width)
    if aligned and bboxes1.size(0) != bboxes2.size(0):
        raise ValueError(
            f"{name}: aligned=True needs as many boxes in both sets, got {bboxes1.size(0)} and "
            f"{bboxes2.size(0)}"
        )
    if bboxes1.device != bboxes2.device:
        raise ValueError(
            f"{name}: the boxes are on {bboxes1.device} and {bboxes2.device}: move both to "
            "one device"
        )
