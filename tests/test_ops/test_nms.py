"""mmpar.ops NMS family: mmcv's return conventions, against slow references written here."""

import math
import warnings

import numpy as np
import pytest
import torch

from mmpar.ops import batched_nms, nms, nms_match, soft_nms


def _boxes(n, seed=0, size=40.0):
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(n, 2, generator=g) * size
    wh = torch.rand(n, 2, generator=g) * size / 2 + 1
    # Distinct scores: the references and the kernels agree on order only without ties.
    scores = torch.randperm(n, generator=g).float() / n + 0.01
    return torch.cat([xy, xy + wh], 1), scores


def _iou(a, b, offset=0):
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]) + offset)
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]) + offset)
    inter = iw * ih
    area = lambda r: (r[2] - r[0] + offset) * (r[3] - r[1] + offset)  # noqa: E731
    return inter / (area(a) + area(b) - inter)


def _ref_nms(boxes, scores, thr, offset=0):
    b, s = boxes.tolist(), scores.tolist()
    keep = []
    for i in sorted(range(len(s)), key=lambda i: -s[i]):
        if all(_iou(b[i], b[k], offset) <= thr for k in keep):
            keep.append(i)
    return keep


def _ref_soft_nms(boxes, scores, thr, sigma, min_score, method, offset=0):
    # mmcv's CPU algorithm step by step: take the max, decay the rest, drop low scores by
    # swapping the last box in.
    b, s = [list(r) for r in boxes.tolist()], scores.tolist()
    idx = list(range(len(s)))
    n, out = len(s), []
    i = 0
    while i < n:
        m = max(range(i, n), key=lambda k: (s[k], -k))
        for arr in (b, s, idx):
            arr[i], arr[m] = arr[m], arr[i]
        out.append((idx[i], s[i]))
        pos = i + 1
        while pos < n:
            ov = _iou(b[i], b[pos], offset)
            if method == "naive":
                w = 0.0 if ov >= thr else 1.0
            elif method == "linear":
                w = 1 - ov if ov >= thr else 1.0
            else:
                w = math.exp(-ov * ov / sigma)
            s[pos] *= w
            if s[pos] < min_score:
                for arr in (b, s, idx):
                    arr[pos] = arr[n - 1]
                n -= 1
                continue
            pos += 1
        i += 1
    return out


@pytest.mark.parametrize("offset", [0, 1])
def test_nms_matches_the_reference_and_returns_mmcv_dets(offset):
    boxes, scores = _boxes(60)
    dets, keep = nms(boxes, scores, 0.3, offset=offset)
    assert keep.tolist() == _ref_nms(boxes, scores, 0.3, offset)
    assert dets.shape == (len(keep), 5)
    assert torch.equal(dets[:, :4], boxes[keep]) and torch.equal(dets[:, 4], scores[keep])
    assert torch.all(dets[1:, 4] <= dets[:-1, 4])


def test_nms_numpy_in_numpy_out_and_thresholds():
    boxes, scores = _boxes(50, seed=1)
    dets, keep = nms(boxes.numpy(), scores.numpy(), 0.5, score_threshold=0.4, max_num=5)
    assert isinstance(dets, np.ndarray) and isinstance(keep, np.ndarray)
    above = (scores > 0.4).nonzero().squeeze(1)
    expected = [int(above[k]) for k in _ref_nms(boxes[above], scores[above], 0.5)][:5]
    assert keep.tolist() == expected and len(keep) == 5


def test_nms_accepts_the_deprecated_iou_thr():
    boxes, scores = _boxes(20)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        _, keep = nms(boxes, scores, iou_thr=0.3)
    assert keep.tolist() == _ref_nms(boxes, scores, 0.3)


def _ref_batched(boxes, scores, idxs, thr):
    kept = []
    for c in idxs.unique().tolist():
        members = (idxs == c).nonzero().squeeze(1)
        kept += [int(members[k]) for k in _ref_nms(boxes[members], scores[members], thr)]
    return sorted(kept, key=lambda i: -float(scores[i]))


def test_batched_nms_suppresses_within_classes_only():
    boxes, scores = _boxes(80, seed=2)
    idxs = torch.arange(80) % 3
    cfg = {"type": "nms", "iou_threshold": 0.3}
    dets, keep = batched_nms(boxes, scores, idxs, cfg)
    assert keep.tolist() == _ref_batched(boxes, scores, idxs, 0.3)
    assert torch.equal(dets, torch.cat([boxes[keep], scores[keep, None]], 1))
    assert cfg == {"type": "nms", "iou_threshold": 0.3}  # the caller's config is not changed


def test_batched_nms_paths_agree():
    # Plain configs take torchvision's batched_nms; any other key takes mmcv's two paths (one
    # offset NMS below split_thr, a loop over classes from it).
    boxes, scores = _boxes(80, seed=3)
    idxs = torch.arange(80) % 4
    fast = batched_nms(boxes, scores, idxs, {"iou_threshold": 0.4})
    direct = batched_nms(boxes, scores, idxs, {"iou_threshold": 0.4, "offset": 0})
    split = batched_nms(boxes, scores, idxs, {"iou_threshold": 0.4, "split_thr": 10, "offset": 0})
    for dets, keep in (direct, split):
        assert torch.equal(dets, fast[0]) and torch.equal(keep, fast[1])
    assert fast[1].tolist() == _ref_batched(boxes, scores, idxs, 0.4)
    capped = batched_nms(boxes, scores, idxs, {"iou_threshold": 0.4, "split_thr": 10, "max_num": 3})
    assert torch.equal(capped[1], fast[1][:3])
    direct_capped = batched_nms(boxes, scores, idxs, {"iou_threshold": 0.4, "max_num": 3})
    assert torch.equal(direct_capped[1], fast[1][:3])


def test_batched_nms_class_agnostic_and_no_config():
    boxes, scores = _boxes(40, seed=4)
    idxs = torch.arange(40) % 2
    dets, keep = batched_nms(boxes, scores, idxs, {"iou_threshold": 0.3, "class_agnostic": True})
    assert keep.tolist() == _ref_nms(boxes, scores, 0.3)
    cfg = {"iou_threshold": 0.3, "class_agnostic": True, "offset": 0}  # mmcv's own path
    assert torch.equal(batched_nms(boxes, scores, idxs, cfg)[1], keep)
    _, keep2 = batched_nms(boxes, scores, idxs, {"iou_threshold": 0.3}, class_agnostic=True)
    assert torch.equal(keep, keep2)
    dets, keep = batched_nms(boxes, scores, idxs, None)
    assert keep.tolist() == torch.argsort(scores, descending=True).tolist()
    assert torch.equal(dets[:, 4], scores[keep])


def test_batched_nms_soft_nms_type_and_rotated_boxes():
    boxes, scores = _boxes(30, seed=5)
    idxs = torch.zeros(30, dtype=torch.long)
    dets, keep = batched_nms(boxes, scores, idxs, {"type": "soft_nms", "iou_threshold": 0.3})
    ref = _ref_soft_nms(boxes, scores, 0.3, 0.5, 1e-3, "linear")
    assert keep.tolist() == [i for i, _ in ref]
    # (N, 5) boxes need type='nms_rotated' (tests/test_ops/test_rotated.py); plain nms asserts
    # (N, 4), as mmcv's does.
    with pytest.raises(AssertionError, match=r"\(N, 4\)"):
        batched_nms(torch.rand(3, 5), torch.rand(3), torch.zeros(3), {"iou_threshold": 0.5})


@pytest.mark.parametrize("method", ["naive", "linear", "gaussian"])
def test_soft_nms_matches_mmcvs_algorithm(method):
    boxes, scores = _boxes(40, seed=6)
    dets, keep = soft_nms(boxes, scores, 0.3, sigma=0.5, min_score=0.05, method=method)
    ref = _ref_soft_nms(boxes, scores, 0.3, 0.5, 0.05, method)
    assert keep.tolist() == [i for i, _ in ref]
    assert torch.allclose(dets[:, 4], torch.tensor([s for _, s in ref]), atol=1e-5)
    assert torch.equal(dets[:, :4], boxes[keep])
    dets_np, keep_np = soft_nms(boxes.numpy(), scores.numpy(), 0.3, method=method)
    assert isinstance(dets_np, np.ndarray) and isinstance(keep_np, np.ndarray)


def test_nms_match_groups_every_box_under_the_box_that_suppresses_it():
    boxes, scores = _boxes(40, seed=7)
    dets = torch.cat([boxes, scores[:, None]], 1)
    groups = nms_match(dets, 0.3)
    leaders = [int(g[0]) for g in groups]
    assert leaders == _ref_nms(boxes, scores, 0.3 - 1e-6)  # match suppresses at >= threshold
    assert sorted(torch.cat(groups).tolist()) == list(range(40))
    for g in groups:
        assert all(_iou(boxes[g[0]].tolist(), boxes[j].tolist()) >= 0.3 for j in g[1:].tolist())
        assert scores[g].tolist() == sorted(scores[g].tolist(), reverse=True)
    assert all(isinstance(g, np.ndarray) for g in nms_match(dets.numpy(), 0.3))
    assert nms_match(dets[:0], 0.3) == []


@pytest.mark.parametrize(
    "cfg",
    [
        dict(iou_threshold=0.5, max_num=10),
        dict(type="soft_nms", iou_threshold=0.5),
        dict(iou_threshold=0.5, score_threshold=0.2),
        dict(iou_threshold=0.5),
    ],
)
def test_batched_nms_with_no_boxes_returns_empty_results(cfg):
    dets, keep = batched_nms(torch.zeros(0, 4), torch.zeros(0), torch.zeros(0).long(), cfg)
    assert dets.shape == (0, 5) and dets.dtype == torch.float32
    assert keep.shape == (0,) and keep.dtype == torch.long
