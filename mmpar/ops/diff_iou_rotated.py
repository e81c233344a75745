"""Differentiable IoU of rotated 2-D and 3-D boxes, as mmcv's ``diff_iou_rotated_2d`` / ``_3d``.

mmcv sorts the intersection's vertices with a CUDA-only kernel; here the whole construction
is batched PyTorch (mmpar.ops._polygon) on any device, differentiable in both boxes through
the corner coordinates.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._polygon import convex_intersection_area

__all__ = ["box2corners", "diff_iou_rotated_2d", "diff_iou_rotated_3d"]


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
