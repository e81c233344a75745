"""Non-maximum suppression with mmcv's signatures, on torchvision's NMS kernel.

mmcv returns ``(dets, keep)``: the kept boxes with their score appended as a last column, and
their indices into the input, highest score first. NumPy in gives NumPy out.
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np
import torch
import torchvision
from torch import Tensor

from mmpar.utils import deprecated_api_warning

from ._polygon import pairwise_iou
from .box_iou_quadri import quadri_circles, quadri_corners
from .box_iou_rotated import check_boxes, rotated_circles, rotated_corners

__all__ = ["batched_nms", "nms", "nms_match", "nms_quadri", "nms_rotated", "soft_nms"]

ArrayLike = Union[Tensor, np.ndarray]  # noqa: UP007 (a runtime alias, kept for old typing)

_SOFT_NMS_METHODS = ("naive", "linear", "gaussian")


def _as_tensors(boxes: ArrayLike, scores: ArrayLike) -> tuple[Tensor, Tensor, bool]:
    if not isinstance(boxes, (Tensor, np.ndarray)) or not isinstance(scores, (Tensor, np.ndarray)):
        raise TypeError(
            f"boxes and scores must be torch.Tensor or np.ndarray, got {type(boxes).__name__} "
            f"and {type(scores).__name__}"
        )
    is_numpy = isinstance(boxes, np.ndarray)
    boxes = torch.from_numpy(boxes) if isinstance(boxes, np.ndarray) else boxes
    scores = torch.from_numpy(scores) if isinstance(scores, np.ndarray) else scores
    return boxes, scores, is_numpy


def _check(boxes: Tensor, scores: Tensor, offset: int) -> None:
    # mmcv asserts these; keep the AssertionError type its callers may catch.
    assert boxes.size(1) == 4, f"boxes must have shape (N, 4), got {tuple(boxes.shape)}"
    assert boxes.size(0) == scores.size(0), "boxes and scores must have the same length"
    assert offset in (0, 1), f"offset must be 0 or 1, got {offset}"


def _with_offset(boxes: Tensor, offset: int) -> Tensor:
    # mmcv's legacy ``offset=1`` measures a box as x2 - x1 + 1 wide; moving the far corner by
    # one gives torchvision's kernel the same widths and overlaps.
    return boxes if offset == 0 else torch.cat([boxes[:, :2], boxes[:, 2:] + offset], dim=1)


def _output(dets: Tensor, inds: Tensor, is_numpy: bool) -> tuple[ArrayLike, ArrayLike]:
    if is_numpy:
        return dets.cpu().numpy(), inds.cpu().numpy()
    return dets, inds


@deprecated_api_warning({"iou_thr": "iou_threshold"})
def nms(
    boxes: ArrayLike,
    scores: ArrayLike,
    iou_threshold: float,
    offset: int = 0,
    score_threshold: float = 0,
    max_num: int = -1,
) -> tuple[ArrayLike, ArrayLike]:
    """Suppress boxes that overlap a higher-scoring box by more than ``iou_threshold``.

    Args:
        boxes: Boxes ``(N, 4)`` as ``x1, y1, x2, y2``.
        scores: Scores ``(N,)``.
        iou_threshold: Overlap (IoU) above which the lower-scoring box is dropped.
        offset: 0, or 1 for the legacy convention where a box is ``x2 - x1 + 1`` wide.
        score_threshold: Boxes scoring at or below this are dropped first (when > 0).
        max_num: Keep at most this many boxes (all when <= 0).

    Returns:
        ``(dets, keep)``: ``dets`` ``(K, 5)`` are the kept boxes with their scores as the last
        column, ``keep`` ``(K,)`` their indices into ``boxes``, by decreasing score; NumPy
        arrays if ``boxes`` was one.
    """
    boxes, scores, is_numpy = _as_tensors(boxes, scores)
    _check(boxes, scores, offset)
    candidates = None
    boxes_in, scores_in = boxes, scores
    if score_threshold > 0:
        candidates = torch.nonzero(scores > score_threshold, as_tuple=False).squeeze(1)
        boxes_in, scores_in = boxes[candidates], scores[candidates]
    inds = torchvision.ops.nms(_with_offset(boxes_in, offset), scores_in, float(iou_threshold))
    if max_num > 0:
        inds = inds[:max_num]
    if candidates is not None:
        inds = candidates[inds]
    dets = torch.cat((boxes[inds], scores[inds].reshape(-1, 1)), dim=1)
    return _output(dets, inds, is_numpy)


def _soft_nms_weights(ious: Tensor, method: str, iou_threshold: float, sigma: float) -> Tensor:
    if method == "naive":
        return (ious < iou_threshold).to(ious.dtype)
    if method == "linear":
        return torch.where(ious >= iou_threshold, 1 - ious, torch.ones_like(ious))
    return torch.exp(-(ious * ious) / sigma)


@deprecated_api_warning({"iou_thr": "iou_threshold"})
def soft_nms(
    boxes: ArrayLike,
    scores: ArrayLike,
    iou_threshold: float = 0.3,
    sigma: float = 0.5,
    min_score: float = 1e-3,
    method: str = "linear",
    offset: int = 0,
) -> tuple[ArrayLike, ArrayLike]:
    """Soft-NMS (Bodla et al., 2017): decay the scores of overlapping boxes instead of dropping.

    Repeatedly takes the highest-scoring remaining box, then multiplies each other remaining
    box's score by a weight of its IoU with it, and drops boxes whose score falls below
    ``min_score``. torchvision has no soft-NMS; this is vectorised PyTorch (one step per kept
    box). Of boxes with equal scores the earlier input index is taken first.

    Args:
        boxes: Boxes ``(N, 4)`` as ``x1, y1, x2, y2``.
        scores: Scores ``(N,)``.
        iou_threshold: For ``'naive'`` (zero weight) and ``'linear'`` (weight ``1 - iou``): the
            IoU from which a box is decayed.
        sigma: For ``'gaussian'``: weight ``exp(-iou**2 / sigma)``.
        min_score: Boxes whose decayed score is below this are dropped.
        method: ``'naive'``, ``'linear'`` or ``'gaussian'``.
        offset: 0, or 1 for the legacy ``x2 - x1 + 1`` box width.

    Returns:
        ``(dets, keep)`` as :func:`nms` returns, with the decayed scores in ``dets``.
    """
    boxes, scores, is_numpy = _as_tensors(boxes, scores)
    _check(boxes, scores, offset)
    assert method in _SOFT_NMS_METHODS, f"method must be one of {_SOFT_NMS_METHODS}, got {method}"
    measured = _with_offset(boxes, offset)
    remaining = torch.arange(boxes.size(0), device=boxes.device)
    current = scores.clone()
    keep, kept_scores = [], []
    while remaining.numel() > 0:
        best = int(torch.argmax(current))
        keep.append(remaining[best])
        kept_scores.append(current[best])
        others = torch.ones_like(remaining, dtype=torch.bool)
        others[best] = False
        remaining, current = remaining[others], current[others]
        if remaining.numel() == 0:
            break
        ious = torchvision.ops.box_iou(measured[keep[-1]].unsqueeze(0), measured[remaining])[0]
        current = current * _soft_nms_weights(ious, method, iou_threshold, sigma)
        alive = current >= min_score
        remaining, current = remaining[alive], current[alive]
    if keep:
        inds = torch.stack(keep)
        dets = torch.cat([boxes[inds], torch.stack(kept_scores).reshape(-1, 1).to(boxes)], 1)
    else:
        inds = torch.zeros(0, dtype=torch.long, device=boxes.device)
        dets = boxes.new_zeros((0, 5))
    return _output(dets, inds, is_numpy)


def nms_match(dets: ArrayLike, iou_threshold: float) -> list[ArrayLike]:
    """Group boxes by NMS: each kept box with the boxes it suppresses.

    Args:
        dets: Boxes with scores ``(N, 5)``: ``x1, y1, x2, y2, score``.
        iou_threshold: IoU from which a lower-scoring box joins a kept box's group.

    Returns:
        One index array (Tensor or NumPy, as ``dets``) per kept box, by decreasing score of
        the kept box; each starts with the kept box, then its suppressed boxes by score.
    """
    is_tensor = isinstance(dets, Tensor)
    groups: list[list[int]] = []
    if dets.shape[0] > 0:
        assert dets.shape[-1] == 5, f"dets must have shape (N, 5), got {tuple(dets.shape)}"
        boxes = dets.detach().cpu() if is_tensor else torch.from_numpy(dets)
        order = torch.argsort(boxes[:, 4], descending=True, stable=True)
        ious = torchvision.ops.box_iou(boxes[order, :4], boxes[order, :4])
        suppressed = torch.zeros(len(order), dtype=torch.bool)
        for i in range(len(order)):
            if suppressed[i]:
                continue
            members = (ious[i, i + 1 :] >= iou_threshold) & ~suppressed[i + 1 :]
            members = torch.nonzero(members, as_tuple=False).squeeze(1) + i + 1
            suppressed[members] = True
            groups.append([int(order[i])] + order[members].tolist())
    if is_tensor:
        return [dets.new_tensor(g, dtype=torch.long) for g in groups]
    return [np.array(g, dtype=int) for g in groups]


_NMS_OPS: dict[str, Any] = {"nms": nms, "soft_nms": soft_nms}
# nms_cfg keys that leave batched_nms a plain per-class NMS ("iou_threshold" is required).
_PLAIN_KEYS = {"type", "iou_threshold", "split_thr"}


def batched_nms(
    boxes: Tensor,
    scores: Tensor,
    idxs: Tensor,
    nms_cfg: dict[str, Any] | None,
    class_agnostic: bool = False,
) -> tuple[Tensor, Tensor]:
    """NMS within each class (or cluster) ``idxs``, as mmcv's ``batched_nms``.

    Boxes of different ``idxs`` never suppress each other: each class's boxes are moved apart
    by an offset before one NMS call, unless there are at least ``split_thr`` boxes, when each
    class is suppressed on its own (less memory).

    Args:
        boxes: Boxes ``(N, 4)``.
        scores: Scores ``(N,)``.
        idxs: Class (cluster) index of each box ``(N,)``.
        nms_cfg: ``None`` to skip NMS (everything back, sorted by score); else the arguments of
            the NMS op: ``type`` (``'nms'`` default, or ``'soft_nms'``), ``iou_threshold``,
            ``split_thr`` (default 10000), ``class_agnostic``, and the op's other arguments
            (``max_num``, ``score_threshold``, ``offset``, ...).
        class_agnostic: Suppress across classes (``nms_cfg['class_agnostic']`` overrides it).

    Returns:
        ``(dets, keep)``: ``dets`` ``(K, 5)`` kept boxes with their (possibly decayed) score as
        last column, ``keep`` their indices into ``boxes``, by decreasing score.
    """
    if nms_cfg is None:
        scores, inds = scores.sort(descending=True)
        return torch.cat([boxes[inds], scores[:, None]], -1), inds

    cfg = dict(nms_cfg)
    class_agnostic = cfg.pop("class_agnostic", class_agnostic)
    plain = cfg.get("type", "nms") == "nms" and "iou_threshold" in cfg and set(cfg) <= _PLAIN_KEYS
    if plain and boxes.size(-1) == 4:
        # Plain NMS per class: torchvision picks the faster of one offset NMS and a loop over
        # classes (mmcv's two paths); the kept boxes and their order are the same.
        iou = float(cfg["iou_threshold"])
        if class_agnostic:
            keep = torchvision.ops.nms(boxes, scores, iou)
        else:
            keep = torchvision.ops.batched_nms(boxes, scores, idxs, iou)
        return torch.cat([boxes[keep], scores[keep, None]], -1), keep
    if class_agnostic:
        boxes_for_nms = boxes
    elif boxes.size(-1) == 5:
        # Rotated boxes: move only the centres apart. max(x, y) + max(w, h) exceeds every
        # corner coordinate, as mmcv reasons.
        max_coordinate = boxes[..., :2].max() + boxes[..., 2:4].max()
        offsets = idxs.to(boxes) * (max_coordinate + 1)
        boxes_for_nms = torch.cat([boxes[..., :2] + offsets[:, None], boxes[..., 2:5]], dim=-1)
    else:
        # Shift each class far enough (past the largest coordinate) that classes cannot overlap.
        max_coordinate = boxes.max()
        offsets = idxs.to(boxes) * (max_coordinate + 1)
        boxes_for_nms = boxes + offsets[:, None]

    nms_type = cfg.pop("type", "nms")
    if nms_type not in _NMS_OPS:
        raise KeyError(f"nms_cfg type {nms_type!r} is not one of {sorted(_NMS_OPS)}")
    nms_op = _NMS_OPS[nms_type]
    split_thr = cfg.pop("split_thr", 10000)
    if boxes_for_nms.shape[0] < split_thr:
        dets, keep = nms_op(boxes_for_nms, scores, **cfg)
        boxes = boxes[keep]
        # soft_nms changes the scores: take them from its output.
        scores = dets[:, -1]
    else:
        max_num = cfg.pop("max_num", -1)
        total_mask = scores.new_zeros(scores.size(), dtype=torch.bool)
        scores_after_nms = scores.new_zeros(scores.size())
        for cls in torch.unique(idxs):
            mask = (idxs == cls).nonzero(as_tuple=False).view(-1)
            dets, keep = nms_op(boxes_for_nms[mask], scores[mask], **cfg)
            total_mask[mask[keep]] = True
            scores_after_nms[mask[keep]] = dets[:, -1]
        keep = total_mask.nonzero(as_tuple=False).view(-1)
        scores, inds = scores_after_nms[keep].sort(descending=True)
        keep = keep[inds]
        boxes = boxes[keep]
        if max_num > 0:
            keep, boxes, scores = keep[:max_num], boxes[:max_num], scores[:max_num]
    return torch.cat([boxes, scores[:, None]], -1), keep


def _greedy_suppression(over: Tensor) -> Tensor:
    """Greedy NMS on ``over`` ``(N, N)``: ``over[i, j]`` says box ``i`` suppresses box ``j``.

    Boxes are in decreasing score order; returns the positions kept. One pass over the boxes
    on the host (as torchvision's CUDA NMS does with its overlap mask): each kept box drops
    the later ones it overlaps.
    """
    over_np = over.cpu().numpy()
    removed = np.zeros(over_np.shape[0], dtype=bool)
    keep = []
    for i in range(over_np.shape[0]):
        if not removed[i]:
            keep.append(i)
            removed |= over_np[i]
    return torch.as_tensor(keep, dtype=torch.long, device=over.device)


def _polygon_nms(
    name: str,
    iou: Any,
    dets: Tensor,
    scores: Tensor,
    iou_threshold: float,
    labels: Tensor | None,
) -> tuple[Tensor, Tensor]:
    if not isinstance(scores, Tensor) or scores.dim() != 1 or scores.size(0) != dets.size(0):
        raise ValueError(
            f"{name}: scores must be a tensor (N,) with one score per box ({dets.size(0)}), got "
            f"{tuple(scores.shape) if isinstance(scores, Tensor) else type(scores).__name__}"
        )
    if labels is not None and (labels.dim() != 1 or labels.size(0) != dets.size(0)):
        raise ValueError(
            f"{name}: labels must be (N,) with N = {dets.size(0)}, got {tuple(labels.shape)}"
        )
    order = scores.sort(0, descending=True)[1]
    corners, circles = iou
    ordered = dets[order].detach()
    # Greedy NMS reads only the overlaps of each box with the lower-scoring ones.
    ious = pairwise_iou(corners, circles, ordered, ordered, "iou", False, upper_only=True)
    # mmcv compares the IoU with the threshold as a C float (float32).
    threshold = torch.tensor(float(np.float32(iou_threshold)), dtype=ious.dtype, device=ious.device)
    over = ious > threshold
    if labels is not None:
        sorted_labels = labels[order]
        over &= sorted_labels[:, None] == sorted_labels[None, :]
    keep = order[_greedy_suppression(over)]
    return torch.cat((dets[keep], scores[keep].reshape(-1, 1)), dim=1), keep


def nms_rotated(
    dets: Tensor,
    scores: Tensor,
    iou_threshold: float,
    labels: Tensor | None = None,
    clockwise: bool = True,
) -> tuple[Tensor, Tensor | None]:
    """NMS of rotated boxes: drop a box whose IoU with a higher-scoring kept box is > the threshold.

    Args:
        dets: Rotated boxes ``(N, 5)`` as ``(x_ctr, y_ctr, w, h, angle)``, angle in radians.
        scores: Scores ``(N,)``.
        iou_threshold: IoU above which the lower-scoring box is dropped (compared in float32,
            as mmcv).
        labels: Optional class of each box ``(N,)``: boxes of different classes never suppress
            each other.
        clockwise: The angle's direction (see :func:`~mmpar.ops.box_iou_rotated`).

    Returns:
        ``(dets, keep)``: the kept boxes ``(K, 6)`` with their score as last column, and their
        indices ``(K,)`` (int64) into ``dets``, by decreasing score. For empty ``dets``:
        ``(dets, None)``, as mmcv.

    Raises:
        ValueError: ``dets`` is not ``(N, 5)``, or ``scores`` / ``labels`` not ``(N,)``.
    """
    check_boxes("nms_rotated", "dets", dets, 5)
    if dets.shape[0] == 0:
        return dets, None
    # The IoU of two boxes is that of their mirror images: the angle convention does not matter.
    del clockwise
    return _polygon_nms(
        "nms_rotated", (rotated_corners, rotated_circles), dets, scores, iou_threshold, labels
    )


def nms_quadri(
    dets: Tensor, scores: Tensor, iou_threshold: float, labels: Tensor | None = None
) -> tuple[Tensor, Tensor | None]:
    """NMS of convex quadrilaterals ``(N, 8)`` as ``x1, y1, ..., x4, y4``.

    As :func:`nms_rotated`, with :func:`~mmpar.ops.box_iou_quadri` as the overlap; the kept
    boxes come back ``(K, 9)`` with their score as last column.

    Raises:
        ValueError: ``dets`` is not ``(N, 8)``, or ``scores`` / ``labels`` not ``(N,)``.
    """
    check_boxes("nms_quadri", "dets", dets, 8)
    if dets.shape[0] == 0:
        return dets, None
    return _polygon_nms(
        "nms_quadri", (quadri_corners, quadri_circles), dets, scores, iou_threshold, labels
    )


_NMS_OPS.update(nms_rotated=nms_rotated, nms_quadri=nms_quadri)
