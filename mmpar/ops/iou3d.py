"""3D and bird's-eye-view box overlaps and NMS (mmcv.ops.iou3d), in PyTorch on any device.

Boxes are ``(x, y, z, dx, dy, dz, heading)`` (``boxes_overlap_bev``, ``boxes_iou3d``,
``nms3d``, ``nms3d_normal``) or, for mmcv's deprecated BEV functions, ``(x1, y1, x2, y2, ry)``.
The rotated overlaps are exact polygon intersections, the same as ``box_iou_rotated``'s
(``mmpar.ops._bev_overlap`` on ``mmpar.ops._polygon``).
"""

from __future__ import annotations

import warnings

import torch
from torch import Tensor

from ._bev_overlap import greedy_keep, overlap_matrix
from ._points_common import check, check_points
from .nms import nms

__all__ = [
    "boxes_iou3d",
    "boxes_iou_bev",
    "boxes_overlap_bev",
    "nms3d",
    "nms3d_normal",
    "nms_bev",
    "nms_normal_bev",
]

_EPS = 1e-8  # mmcv's iou3d kernel: the smallest union it divides by


def _boxes(op: str, boxes: Tensor, width: int, name: str = "boxes") -> None:
    check_points(boxes, op, name, 2, width)


def _bev(boxes: Tensor) -> Tensor:
    """``(x, y, dx, dy, heading)`` footprints of 7-value boxes."""
    return boxes[:, [0, 1, 3, 4, 6]]


def _xyxyr2xywhr(boxes: Tensor) -> Tensor:
    """``(x1, y1, x2, y2, r)`` to ``(x_centre, y_centre, w, h, r)`` (mmcv's private helper)."""
    warnings.warn(
        "This function is deprecated and will be removed in the future.",
        DeprecationWarning,
        stacklevel=2,
    )
    return torch.stack(
        (
            (boxes[:, 0] + boxes[:, 2]) / 2,
            (boxes[:, 1] + boxes[:, 3]) / 2,
            boxes[:, 2] - boxes[:, 0],
            boxes[:, 3] - boxes[:, 1],
            boxes[:, 4],
        ),
        dim=-1,
    )


def boxes_overlap_bev(boxes_a: Tensor, boxes_b: Tensor) -> Tensor:
    """Bird's-eye-view intersection areas of two sets of 3D boxes.

    Args:
        boxes_a: ``(M, 7)`` boxes ``(x, y, z, dx, dy, dz, heading)``.
        boxes_b: ``(N, 7)`` boxes.

    Returns:
        ``(M, N)`` areas of the footprints' intersections.

    Raises:
        TypeError: When an input is not a floating tensor.
        AssertionError: When a shape is not ``(*, 7)``.
    """
    _boxes("boxes_overlap_bev", boxes_a, 7, "boxes_a")
    _boxes("boxes_overlap_bev", boxes_b, 7, "boxes_b")
    return overlap_matrix(_bev(boxes_a), _bev(boxes_b))


def boxes_iou3d(boxes_a: Tensor, boxes_b: Tensor) -> Tensor:
    """3D IoU of two sets of boxes (footprint overlap times height overlap).

    ``(x, y, z)`` is the box centre here, as mmcv's ``boxes_iou3d`` treats it.

    Args:
        boxes_a: ``(M, 7)`` boxes ``(x, y, z, dx, dy, dz, heading)``.
        boxes_b: ``(N, 7)`` boxes.

    Returns:
        ``(M, N)`` IoUs (the union clamped to at least 1e-6, as mmcv).

    Raises:
        TypeError: When an input is not a floating tensor.
        AssertionError: When a shape is not ``(*, 7)``.
    """
    _boxes("boxes_iou3d", boxes_a, 7, "boxes_a")
    _boxes("boxes_iou3d", boxes_b, 7, "boxes_b")
    top_a = (boxes_a[:, 2] + boxes_a[:, 5] / 2).view(-1, 1)
    bottom_a = (boxes_a[:, 2] - boxes_a[:, 5] / 2).view(-1, 1)
    top_b = (boxes_b[:, 2] + boxes_b[:, 5] / 2).view(1, -1)
    bottom_b = (boxes_b[:, 2] - boxes_b[:, 5] / 2).view(1, -1)
    overlap_h = torch.clamp(torch.min(top_a, top_b) - torch.max(bottom_a, bottom_b), min=0)
    overlap_3d = overlap_matrix(_bev(boxes_a), _bev(boxes_b)) * overlap_h
    vol_a = (boxes_a[:, 3] * boxes_a[:, 4] * boxes_a[:, 5]).view(-1, 1)
    vol_b = (boxes_b[:, 3] * boxes_b[:, 4] * boxes_b[:, 5]).view(1, -1)
    return overlap_3d / torch.clamp(vol_a + vol_b - overlap_3d, min=1e-6)


def _sorted(op: str, boxes: Tensor, scores: Tensor, width: int) -> tuple[Tensor, Tensor]:
    _boxes(op, boxes, width)
    check(
        isinstance(scores, Tensor) and scores.dim() == 1 and scores.shape[0] == boxes.shape[0],
        op,
        f"scores must be (N,) with N = {boxes.shape[0]} boxes, got "
        f"{tuple(getattr(scores, 'shape', ()))}",
        AssertionError,
    )
    # Stable, so equal scores keep their input order (mmcv's sort is unstable there).
    order = scores.sort(dim=0, descending=True, stable=True)[1]
    return order, boxes[order]


def _keep(order: Tensor, suppresses: Tensor) -> Tensor:
    return order[greedy_keep(suppresses)].contiguous()


def nms3d(boxes: Tensor, scores: Tensor, iou_threshold: float) -> Tensor:
    """NMS on the bird's-eye-view IoU of rotated 3D boxes.

    A box is dropped when its BEV IoU with a kept, higher-scoring box is greater than
    ``iou_threshold``.

    Args:
        boxes: ``(N, 7)`` boxes ``(x, y, z, dx, dy, dz, heading)``.
        scores: ``(N,)`` scores.
        iou_threshold: IoU above which the lower-scoring box is dropped.

    Returns:
        int64 indices of the kept boxes, highest score first.

    Raises:
        TypeError: When ``boxes`` is not a floating tensor.
        AssertionError: On wrong shapes.
    """
    order, boxes = _sorted("nms3d", boxes, scores, 7)
    bev = _bev(boxes)
    inter = overlap_matrix(bev, bev, upper_only=True)
    area = bev[:, 2] * bev[:, 3]
    iou = inter / torch.clamp(area[:, None] + area[None, :] - inter, min=_EPS)
    return _keep(order, iou > iou_threshold)


def nms3d_normal(boxes: Tensor, scores: Tensor, iou_threshold: float) -> Tensor:
    """NMS on the bird's-eye-view IoU of 3D boxes with their heading ignored (set to 0).

    Args:
        boxes: ``(N, 7)`` boxes ``(x, y, z, dx, dy, dz, heading)``.
        scores: ``(N,)`` scores.
        iou_threshold: IoU above which the lower-scoring box is dropped.

    Returns:
        int64 indices of the kept boxes, highest score first.

    Raises:
        TypeError: When ``boxes`` is not a floating tensor.
        AssertionError: On wrong shapes.
    """
    order, boxes = _sorted("nms3d_normal", boxes, scores, 7)
    x, y, dx, dy = boxes[:, 0], boxes[:, 1], boxes[:, 3], boxes[:, 4]
    left = torch.max((x - dx / 2)[:, None], (x - dx / 2)[None, :])
    right = torch.min((x + dx / 2)[:, None], (x + dx / 2)[None, :])
    top = torch.max((y - dy / 2)[:, None], (y - dy / 2)[None, :])
    bottom = torch.min((y + dy / 2)[:, None], (y + dy / 2)[None, :])
    inter = (right - left).clamp(min=0) * (bottom - top).clamp(min=0)
    area = dx * dy
    iou = inter / torch.clamp(area[:, None] + area[None, :] - inter, min=_EPS)
    return _keep(order, iou > iou_threshold)


def boxes_iou_bev(boxes_a: Tensor, boxes_b: Tensor) -> Tensor:
    """Bird's-eye-view IoU of rotated boxes ``(x1, y1, x2, y2, ry)`` (deprecated in mmcv).

    mmcv computes it with ``box_iou_rotated`` on the centre form: boxes of area below
    1e-14 have IoU 0. Warns with a ``DeprecationWarning``, as mmcv.

    Args:
        boxes_a: ``(M, 5)`` boxes.
        boxes_b: ``(N, 5)`` boxes.

    Returns:
        ``(M, N)`` IoUs.

    Raises:
        TypeError: When an input is not a floating tensor.
        AssertionError: When a shape is not ``(*, 5)``.
    """
    warnings.warn(
        "`iou3d.boxes_iou_bev` is deprecated and will be removed in the future. Please, use "
        "`box_iou_rotated.box_iou_rotated`.",
        DeprecationWarning,
        stacklevel=2,
    )
    _boxes("boxes_iou_bev", boxes_a, 5, "boxes_a")
    _boxes("boxes_iou_bev", boxes_b, 5, "boxes_b")
    a, b = _xyxyr2xywhr(boxes_a), _xyxyr2xywhr(boxes_b)
    return _rotated_iou(a, b, overlap_matrix(a, b))


def _rotated_iou(a: Tensor, b: Tensor, inter: Tensor) -> Tensor:
    area_a = (a[:, 2] * a[:, 3]).view(-1, 1)
    area_b = (b[:, 2] * b[:, 3]).view(1, -1)
    iou = inter / (area_a + area_b - inter)
    degenerate = (area_a < 1e-14) | (area_b < 1e-14)
    return torch.where(degenerate, torch.zeros_like(iou), iou)


def nms_bev(
    boxes: Tensor,
    scores: Tensor,
    thresh: float,
    pre_max_size: int | None = None,
    post_max_size: int | None = None,
) -> Tensor:
    """NMS on the exact IoU of rotated BEV boxes ``(x1, y1, x2, y2, ry)`` (deprecated in mmcv).

    As mmcv's (which calls ``nms_rotated``): a box is dropped when its IoU with a kept,
    higher-scoring box is at least ``thresh``. Warns with a ``DeprecationWarning``.

    Args:
        boxes: ``(N, 5)`` boxes.
        scores: ``(N,)`` scores.
        thresh: IoU at or above which the lower-scoring box is dropped.
        pre_max_size: Keep only this many highest-scoring boxes before NMS.
        post_max_size: Return at most this many boxes.

    Returns:
        int64 indices of the kept boxes, highest score first.

    Raises:
        TypeError: When ``boxes`` is not a floating tensor.
        AssertionError: On wrong shapes.
    """
    warnings.warn(
        "`iou3d.nms_bev` is deprecated and will be removed in the future. Please, use "
        "`nms.nms_rotated`.",
        DeprecationWarning,
        stacklevel=2,
    )
    order, _ = _sorted("nms_bev", boxes, scores, 5)
    if pre_max_size is not None:
        order = order[:pre_max_size]
    rotated = _xyxyr2xywhr(boxes)[order]
    iou = _rotated_iou(rotated, rotated, overlap_matrix(rotated, rotated, upper_only=True))
    keep = _keep(order, iou >= thresh)
    return keep if post_max_size is None else keep[:post_max_size]


def nms_normal_bev(boxes: Tensor, scores: Tensor, thresh: float) -> Tensor:
    """NMS on axis-aligned BEV boxes, ignoring ``ry`` (deprecated in mmcv): :func:`nms`.

    Args:
        boxes: ``(N, 5)`` boxes ``(x1, y1, x2, y2, ry)``.
        scores: ``(N,)`` scores.
        thresh: IoU threshold of :func:`mmpar.ops.nms`.

    Returns:
        int64 indices of the kept boxes, highest score first.

    Raises:
        AssertionError: When ``boxes`` is not ``(N, 5)``.
    """
    warnings.warn(
        "`iou3d.nms_normal_bev` is deprecated and will be removed in the future. Please, use "
        "`nms.nms`.",
        DeprecationWarning,
        stacklevel=2,
    )
    _boxes("nms_normal_bev", boxes, 5)
    return nms(boxes[:, :-1], scores, thresh)[1]
