"""Which 3D boxes each point falls in (mmcv.ops.points_in_boxes), in PyTorch on any device.

A point is in a box when it is strictly inside the box's rotated footprint and within its
height (bounds included), computed as mmcv-full's kernels do; the three functions differ only
in what they return.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._points_common import check_pair, check_points, in_boxes_mask

__all__ = ["points_in_boxes_all", "points_in_boxes_cpu", "points_in_boxes_part"]


def _inside(op: str, points: Tensor, boxes: Tensor) -> Tensor:
    check_points(points, op, "points", 3, 3)
    check_points(boxes, op, "boxes", 3, 7)
    check_pair(op, points, boxes, "points", "boxes")
    dtype = torch.promote_types(points.dtype, boxes.dtype)
    return in_boxes_mask(points.to(dtype), boxes.to(dtype))


def points_in_boxes_part(points: Tensor, boxes: Tensor) -> Tensor:
    """Find the first box each point is in.

    Args:
        points: ``(B, M, 3)`` points ``(x, y, z)`` in LiDAR/depth coordinates.
        boxes: ``(B, T, 7)`` boxes ``(x, y, z, x_size, y_size, z_size, rz)``, ``(x, y, z)``
            the bottom centre.

    Returns:
        ``(B, M)`` int32: the index of the first box containing each point, ``-1`` for none.

    Raises:
        TypeError: When an input is not a floating-point tensor.
        AssertionError: On wrong shapes, different batch sizes or devices (as mmcv asserts).
    """
    inside = _inside("points_in_boxes_part", points, boxes)
    if inside.shape[-1] == 0:
        return torch.full(inside.shape[:2], -1, dtype=torch.int32, device=inside.device)
    # argmax returns the first maximal entry: the lowest index of a box holding the point.
    first = inside.to(torch.uint8).argmax(-1)
    return torch.where(inside.any(-1), first, -1).to(torch.int32)


def points_in_boxes_all(points: Tensor, boxes: Tensor) -> Tensor:
    """Find all boxes each point is in.

    Args:
        points: ``(B, M, 3)`` points ``(x, y, z)`` in LiDAR/depth coordinates.
        boxes: ``(B, T, 7)`` boxes ``(x, y, z, x_size, y_size, z_size, rz)``, ``(x, y, z)``
            the bottom centre.

    Returns:
        ``(B, M, T)`` int32: 1 where the point is in the box, else 0.

    Raises:
        TypeError: When an input is not a floating-point tensor.
        AssertionError: On wrong shapes, different batch sizes or devices (as mmcv asserts).
    """
    return _inside("points_in_boxes_all", points, boxes).to(torch.int32)


def points_in_boxes_cpu(points: Tensor, boxes: Tensor) -> Tensor:
    """Find all boxes each point is in: mmcv's CPU variant of :func:`points_in_boxes_all`.

    As in mmcv, the inputs are converted to float32 first. It runs on any device here.

    Args:
        points: ``(B, M, 3)`` points ``(x, y, z)`` in LiDAR/depth coordinates.
        boxes: ``(B, T, 7)`` boxes ``(x, y, z, x_size, y_size, z_size, rz)``, ``(x, y, z)``
            the bottom centre.

    Returns:
        ``(B, M, T)`` int32: 1 where the point is in the box, else 0.

    Raises:
        TypeError: When an input is not a floating-point tensor.
        AssertionError: On wrong shapes, different batch sizes or devices (as mmcv asserts).
    """
    check_points(points, "points_in_boxes_cpu", "points", 3, 3)
    check_points(boxes, "points_in_boxes_cpu", "boxes", 3, 7)
    return _inside("points_in_boxes_cpu", points.float(), boxes.float()).to(torch.int32)
