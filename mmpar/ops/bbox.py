"""Pairwise and aligned box overlaps (IoU / IoF) with mmcv's ``bbox_overlaps`` signature."""

from __future__ import annotations

import torch
from torch import Tensor

from mmpar.utils.compat_errors import CheckValueError

__all__ = ["bbox_overlaps"]


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise CheckValueError(f"bbox_overlaps: {message}")


def bbox_overlaps(
    bboxes1: Tensor, bboxes2: Tensor, mode: str = "iou", aligned: bool = False, offset: int = 0
) -> Tensor:
    """Overlap of boxes: every pair, or row ``i`` with row ``i`` when ``aligned``.

    Args:
        bboxes1: Boxes ``(M, 4)`` as ``x1, y1, x2, y2``.
        bboxes2: Boxes ``(N, 4)`` (``N == M`` when ``aligned``).
        mode: ``'iou'`` (intersection over union) or ``'iof'`` (intersection over the area of
            the ``bboxes1`` box).
        aligned: Compare row ``i`` with row ``i`` only.
        offset: 0, or 1 for the legacy ``x2 - x1 + 1`` box width.

    Returns:
        ``(M, N)``, or ``(M,)`` when ``aligned``.

    Raises:
        CheckValueError: (a ``ValueError`` and, as mmcv asserts, an ``AssertionError``) for an
            unknown ``mode`` or ``offset``, boxes that are not ``(n, 4)``, or ``aligned`` with
            unequal box counts.
    """
    _check(mode in ("iou", "iof"), f"mode must be 'iou' or 'iof', got {mode!r}")
    for name, boxes in (("bboxes1", bboxes1), ("bboxes2", bboxes2)):
        _check(
            boxes.size(-1) == 4 or boxes.size(0) == 0,
            f"{name} must be (n, 4) boxes x1, y1, x2, y2, got shape {tuple(boxes.shape)}",
        )
    _check(offset in (0, 1), f"offset must be 0 or 1, got {offset!r}")
    rows, cols = bboxes1.size(0), bboxes2.size(0)
    _check(
        not aligned or rows == cols,
        f"aligned=True pairs box i of bboxes1 with box i of bboxes2, so it needs as many boxes "
        f"in both, got {rows} and {cols}; use aligned=False for every pair",
    )
    if rows * cols == 0:
        return bboxes1.new_zeros(rows if aligned else (rows, cols))
    if not aligned:
        # Broadcast (M, 1, 4) against (N, 4): every pair.
        bboxes1 = bboxes1[:, None, :]
    lt = torch.max(bboxes1[..., :2], bboxes2[..., :2])
    rb = torch.min(bboxes1[..., 2:], bboxes2[..., 2:])
    wh = (rb - lt + offset).clamp(min=0)
    overlap = wh[..., 0] * wh[..., 1]
    area1 = (bboxes1[..., 2] - bboxes1[..., 0] + offset) * (
        bboxes1[..., 3] - bboxes1[..., 1] + offset
    )
    if mode == "iof":
        return overlap / area1
    area2 = (bboxes2[..., 2] - bboxes2[..., 0] + offset) * (
        bboxes2[..., 3] - bboxes2[..., 1] + offset
    )
    return overlap / (area1 + area2 - overlap)
