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

from ._autograd import op_function
from ._polygon import pairwise_iou
from .box_iou_quadri import quadri_circles, quadri_corners
from .box_iou_rotated import check_boxes, rotated_circles, rotated_corners

__all__ = [
    "NMSop",
    "SoftNMSop",
    "array_like_type",
    "batched_nms",
    "nms",
    "nms_match",
    "nms_quadri",
    "nms_rotated",
    "soft_nms",
]

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


def _float32_threshold(iou_threshold: float) -> float:
    """The threshold as mmcv's kernels compare with it: rounded to float32.

    mmcv suppresses a box when ``float32(iou) > float32(thr)``. torchvision's CPU kernel
    compares the float32 IoU with the threshold as a double, so for a threshold such as 0.6
    (float32(0.6) > 0.6) an IoU equal to float32(0.6) counts as above it. Handing torchvision
    the double value of float32(thr) makes its comparison the float32 one: a float32 IoU
    promoted to double is exact, so ``iou > double(float32(thr))`` iff
    ``iou > float32(thr)`` in float32 (its CUDA kernel converts to float32 anyway).
    """
    return float(np.float32(iou_threshold))


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
        iou_threshold: Overlap (IoU) above which the lower-scoring box is dropped: a box is
            dropped when its float32 IoU is strictly greater than ``float32(iou_threshold)``,
            as in mmcv's kernels.
        offset: 0, or 1 for the legacy convention where a box is ``x2 - x1 + 1`` wide.
        score_threshold: Boxes scoring at or below this are dropped first (when > 0).
        max_num: Keep at most this many boxes (all when <= 0).

    Returns:
        ``(dets, keep)``: ``dets`` ``(K, 5)`` are the kept boxes with their scores as the last
        column, ``keep`` ``(K,)`` their indices into ``boxes``, by decreasing score; NumPy
        arrays if ``boxes`` was one.

    Raises:
        TypeError: ``boxes`` or ``scores`` is neither a Tensor nor an ndarray.
        AssertionError: ``boxes`` is not ``(N, 4)``, ``scores`` has another length, or
            ``offset`` is not 0 or 1 (as mmcv).
    """
    boxes, scores, is_numpy = _as_tensors(boxes, scores)
    _check(boxes, scores, offset)
    candidates = None
    boxes_in, scores_in = boxes, scores
    if score_threshold > 0:
        candidates = torch.nonzero(scores > score_threshold, as_tuple=False).squeeze(1)
        boxes_in, scores_in = boxes[candidates], scores[candidates]
    inds = torchvision.ops.nms(
        _with_offset(boxes_in, offset), scores_in, _float32_threshold(iou_threshold)
    )
    if max_num > 0:
        inds = inds[:max_num]
    if candidates is not None:
        inds = candidates[inds]
    dets = torch.cat((boxes[inds], scores[inds].reshape(-1, 1)), dim=1)
    return _output(dets, inds, is_numpy)


def _soft_nms_weights(
    ious: np.ndarray, method: str, iou_threshold: float, sigma: float
) -> np.ndarray:
    # mmcv's weights, compared and computed in the IoU's dtype (float32 in, as its kernel).
    if method == "naive":
        return (ious < iou_threshold).astype(ious.dtype)
    if method == "linear":
        return np.where(ious >= iou_threshold, 1 - ious, np.ones_like(ious))
    # torch's exp (and its division by a scalar), whose float32 results the reference tests pin.
    iou = torch.from_numpy(ious)
    return torch.exp(-(iou * iou) / sigma).numpy()


def _pair_iou(boxes: np.ndarray, a: np.ndarray, b: np.ndarray, offset: int) -> np.ndarray:
    """IoU of ``boxes[a]`` with ``boxes[b]`` with mmcv's float arithmetic and ``offset``."""
    x1, y1, x2, y2 = boxes.T
    areas = (x2 - x1 + offset) * (y2 - y1 + offset)
    w = np.maximum(np.minimum(x2[a], x2[b]) - np.maximum(x1[a], x1[b]) + offset, 0)
    h = np.maximum(np.minimum(y2[a], y2[b]) - np.maximum(y1[a], y1[b]) + offset, 0)
    inter = w * h
    return inter / (areas[a] + areas[b] - inter)


def _x_overlapping_pairs(boxes: np.ndarray, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """Each unordered pair of boxes whose x-extents may overlap, once (a sweep over sorted x1).

    Pairs left out have no positive overlap width, hence IoU 0. The bound is generous for
    ``offset=1`` (2 pixels) so that no rounding of ``x2 - x1 + 1`` can lose a pair.
    """
    n = boxes.shape[0]
    order = np.argsort(boxes[:, 0], kind="stable")
    x1 = boxes[order, 0]
    # Sorted positions after i whose x1 is below box i's right edge.
    end = np.searchsorted(x1, boxes[order, 2] + 2 * offset, side="left")
    first = np.arange(1, n + 1)
    count = np.maximum(end - first, 0)
    a = np.repeat(np.arange(n), count)
    group_start = np.repeat(np.cumsum(count) - count, count)
    b = first[a] + np.arange(a.size) - group_start
    return order[a], order[b]


def _soft_nms_edges(
    boxes: np.ndarray, iou_threshold: float, sigma: float, method: str, offset: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs of boxes that decay each other: ``(low, high, weight)``, weight != 1.

    Weights are symmetric (so is the IoU, operand for operand), so each pair is listed once,
    the lower index first. Only pairs whose x-extents overlap are measured, unless a zero IoU
    itself decays (``'naive'`` with a threshold <= 0), when every pair is.
    """
    n = boxes.shape[0]
    zero = np.zeros(1, dtype=boxes.dtype)
    if _soft_nms_weights(zero, method, iou_threshold, sigma)[0] != 1:
        a, b = np.triu_indices(n, 1)
    else:
        a, b = _x_overlapping_pairs(boxes, offset)
    weight = _soft_nms_weights(_pair_iou(boxes, a, b, offset), method, iou_threshold, sigma)
    decays = weight != 1
    a, b, weight = a[decays], b[decays], weight[decays]
    return np.minimum(a, b), np.maximum(a, b), weight


def _soft_nms_keep(
    boxes: Tensor,
    scores: Tensor,
    iou_threshold: float,
    sigma: float,
    min_score: float,
    method: str,
    offset: int,
) -> tuple[Tensor, Tensor]:
    """The greedy soft-NMS of mmcv, resolved many boxes at a time.

    mmcv takes the highest remaining score, decays the other boxes by their overlap with it
    and drops those under ``min_score``, one box per step. A box's score only changes when
    an overlapping box (one whose weight on it is not exactly 1) is taken before it, and
    scores only decrease; so every box that outscores all its remaining overlapping boxes
    is taken next with the score it has now, whatever happens elsewhere. Each round takes
    all of those at once, then applies their decays in the order mmcv would (highest score
    first, one multiplication at a time, so the float32 products are mmcv's). The number of
    rounds is the longest chain of overlapping boxes, not the number of boxes. Of equal
    scores the lower index is taken first (mmcv's order depends on its swaps).

    Returns:
        ``(keep, kept_scores)``, in the order mmcv takes them (decreasing score).
    """
    n = boxes.size(0)
    device = boxes.device
    index = torch.arange(n, device=device)
    if n == 0:
        return index, scores[:0]
    # Many small steps: NumPy's per-call cost is a fraction of torch's, and mmcv's own
    # soft-NMS runs on a CPU copy too.
    low, high, weight = _soft_nms_edges(
        boxes.detach().cpu().numpy(), iou_threshold, sigma, method, offset
    )
    keep, kept = _soft_nms_rounds(
        scores.detach().cpu().numpy().copy(), low, high, weight, min_score
    )
    return torch.from_numpy(keep).to(device), torch.from_numpy(kept).to(device)


def _soft_nms_rounds(
    score: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    weight: np.ndarray,
    min_score: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The rounds of ``_soft_nms_keep`` on NumPy arrays; ``score`` is updated in place.

    ``low < high`` index each decaying pair once: of the two, the one mmcv takes first (higher
    score, then lower index) is the winner, and the loser can't be taken this round.
    """
    n = score.shape[0]
    # mmcv never checks the first box it takes against min_score; every other box is
    # checked (and dropped if under) after the first step even when not decayed.
    alive = score >= min_score
    alive[np.argmax(score)] = True
    taken = np.zeros(n, dtype=bool)
    while True:
        open_ = alive & ~taken
        if not open_.any():
            break
        # Only pairs of boxes still open matter from now on.
        live = open_[low] & open_[high]
        low, high, weight = low[live], high[live], weight[live]
        low_wins = score[low] >= score[high]  # a tie goes to the lower index
        winner = np.where(low_wins, low, high)
        loser = np.where(low_wins, high, low)
        new = open_.copy()
        new[loser] = False
        taken |= new
        # Decays from the boxes just taken onto their open neighbours, in taking order.
        hit = new[winner]
        if hit.any():
            t, d, w = loser[hit], winner[hit], weight[hit]
            # By decayed box, then by the decayer's taking order (score down, index up).
            order = np.lexsort((d, -score[d], t))
            t, w = t[order], w[order]
            # One row per decayed box: its score, then its weights in taking order, padded
            # with exact 1s; a running product along the row multiplies one at a time in the
            # scores' dtype, as mmcv's ``sc[pos] *= weight`` (torch.cumprod on the CPU
            # accumulates float32 in double: one rounding per row, not one per weight).
            first = np.empty(len(t), dtype=bool)
            first[0] = True
            np.not_equal(t[1:], t[:-1], out=first[1:])
            if first.all():  # one decay per box (the common round): one multiplication each
                score[t] = score[t] * w
            else:
                starts = np.flatnonzero(first)
                targets = t[starts]
                group = np.cumsum(first) - 1
                rank = np.arange(len(t)) - starts[group]
                rows = np.ones((len(targets), int(rank.max()) + 2), dtype=score.dtype)
                rows[:, 0] = score[targets]
                rows[group, rank + 1] = w
                score[targets] = np.multiply.accumulate(rows, axis=1)[:, -1]
        alive &= ~(open_ & ~new & (score < min_score))
    keep = np.flatnonzero(taken)
    # mmcv's taking order: its scores never increase from one step to the next.
    keep = keep[np.argsort(-score[keep], kind="stable")]
    return keep, score[keep]


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

    mmcv's algorithm: repeatedly take the highest-scoring remaining box, multiply each other
    remaining box's score by a weight of its IoU with it, and drop boxes whose score falls
    below ``min_score`` (the first box taken is kept whatever its score). torchvision has no
    soft-NMS; this takes many boxes per step (see ``_soft_nms_keep``), on a CPU copy with
    NumPy as mmcv's kernel runs on the CPU, and returns on the input's device. Of boxes with
    equal scores the earlier input index is taken first.

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

    Raises:
        AssertionError: As mmcv, for boxes not ``(N, 4)``, a length mismatch, an offset other
            than 0 or 1, or an unknown method.
    """
    boxes, scores, is_numpy = _as_tensors(boxes, scores)
    _check(boxes, scores, offset)
    assert method in _SOFT_NMS_METHODS, f"method must be one of {_SOFT_NMS_METHODS}, got {method}"
    keep, kept_scores = _soft_nms_keep(
        boxes,
        scores.to(boxes.dtype),
        _float32_threshold(iou_threshold),
        _float32_threshold(sigma),
        _float32_threshold(min_score),
        method,
        offset,
    )
    dets = torch.cat([boxes[keep], kept_scores.reshape(-1, 1)], 1)
    return _output(dets, keep, is_numpy)


def nms_match(dets: ArrayLike, iou_threshold: float) -> list[ArrayLike]:
    """Group boxes by NMS: each kept box with the boxes it suppresses.

    Args:
        dets: Boxes with scores ``(N, 5)``: ``x1, y1, x2, y2, score``.
        iou_threshold: IoU from which a lower-scoring box joins a kept box's group.

    Returns:
        One index array (Tensor or NumPy, as ``dets``) per kept box, by decreasing score of
        the kept box; each starts with the kept box, then its suppressed boxes by score.

    Raises:
        AssertionError: ``dets`` is not ``(N, 5)`` (as mmcv).
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

    Raises:
        KeyError: ``nms_cfg['type']`` is not a known NMS op.
        TypeError: ``nms_cfg`` lacks ``iou_threshold`` or has an argument the op does not take.
        AssertionError: The op's checks (as :func:`nms` and :func:`soft_nms`: box shape,
            ``offset``, ``method``).
        RuntimeError: ``scores`` has another length than ``boxes`` (torchvision's check;
            a wrong length of ``idxs`` is not detected).
    """
    if nms_cfg is None:
        scores, inds = scores.sort(descending=True)
        return torch.cat([boxes[inds], scores[:, None]], -1), inds

    cfg = dict(nms_cfg)
    class_agnostic = cfg.pop("class_agnostic", class_agnostic)
    if boxes.size(0) == 0:
        # mmcv's own call fails here (``boxes.max()`` of nothing); mmdet guards it. Nothing
        # in, nothing out, in the shapes and dtypes of a non-empty result.
        return boxes.new_zeros((0, boxes.size(-1) + 1)), idxs.new_zeros(0, dtype=torch.long)
    plain = cfg.get("type", "nms") == "nms" and "iou_threshold" in cfg and set(cfg) <= _PLAIN_KEYS
    if plain and boxes.size(-1) == 4:
        # Plain NMS per class: torchvision moves classes apart as mmcv does up to 1000 boxes
        # and loops over classes above (3x faster than mmcv's one NMS at 3000 boxes; the IoUs
        # of unshifted boxes may differ from mmcv's shifted ones in the last bit).
        iou = _float32_threshold(cfg["iou_threshold"])
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

# mmcv's name for the alias.
array_like_type = ArrayLike


def _nms_indices(
    bboxes: Tensor,
    scores: Tensor,
    iou_threshold: float,
    offset: int,
    score_threshold: float,
    max_num: int,
) -> Tensor:
    return nms(bboxes, scores, iou_threshold, offset, score_threshold, max_num)[1]


NMSop = op_function(
    "NMSop",
    _nms_indices,
    __name__,
    doc="mmcv's autograd ``Function`` of :func:`nms`, giving the kept indices only.",
)


# The method codes mmcv's soft_nms passes to its kernel.
_SOFT_NMS_CODES = dict(enumerate(_SOFT_NMS_METHODS))


def _soft_nms_padded(
    boxes: Tensor,
    scores: Tensor,
    iou_threshold: float,
    sigma: float,
    min_score: float,
    method: int,
    offset: int,
) -> tuple[Tensor, Tensor]:
    dets, inds = soft_nms(
        boxes, scores, iou_threshold, sigma, min_score, _SOFT_NMS_CODES[int(method)], offset
    )
    # mmcv's kernel fills the first len(inds) rows of an (N, 5) buffer; the rest are zeros here.
    padded = dets.new_zeros((boxes.size(0), 5))
    padded[: dets.size(0)] = dets
    return padded, inds


SoftNMSop = op_function(
    "SoftNMSop",
    _soft_nms_padded,
    __name__,
    doc="""mmcv's autograd function of :func:`soft_nms` (no gradient).

    Its ``method`` is the kernel's code (0 naive, 1 linear, 2 gaussian); it gives ``(dets,
    inds)`` with ``dets`` ``(N, 5)``, of which the first ``len(inds)`` rows are the kept boxes.
    """,
)
