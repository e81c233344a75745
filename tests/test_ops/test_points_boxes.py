"""The point-cloud ops on 3D boxes: points_in_boxes, iou3d, RoIAwarePool3d, RoIPointPool3d.

References: mmcv-full's CPU kernel output where one exists (tests/data/mmcv_reference/points,
made by scripts/mmcv_reference/points.py), shapely for the BEV overlaps, and slow loops that
follow mmcv's CUDA kernels for the rest.
"""

import math
import warnings

import numpy as np
import pytest
import shapely.geometry
import torch
from helpers.mmcv_reference import load_reference
from hypothesis import given, settings
from hypothesis import strategies as st

from mmpar.ops import (
    RoIAwarePool3d,
    RoIPointPool3d,
    boxes_iou3d,
    boxes_iou_bev,
    boxes_overlap_bev,
    nms3d,
    nms3d_normal,
    nms_bev,
    nms_normal_bev,
    points_in_boxes_all,
    points_in_boxes_cpu,
    points_in_boxes_part,
)
from mmpar.ops._polygon import rotated_box_corners

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _boxes3d(num, seed, spread=6.0):
    gen = torch.Generator().manual_seed(seed)
    centre = torch.rand(num, 3, generator=gen) * torch.tensor([spread, spread, 2.0]) - 1
    size = torch.rand(num, 3, generator=gen) * 2 + 0.5
    rz = (torch.rand(num, 1, generator=gen) * 2 - 1) * math.pi
    return torch.cat([centre, size, rz], 1)


def _in_box_loop(point, box):
    """mmcv's check_pt_in_box3d, one point and one box, in float32 scalars."""
    f = np.float32
    x, y, z = (f(v) for v in point)
    cx, cy, cz, dx, dy, dz, rz = (f(v) for v in box)
    cz = cz + dz / f(2)
    if abs(z - cz) > dz / f(2):
        return 0
    cosa, sina = f(math.cos(-float(rz))), f(math.sin(-float(rz)))
    lx = (x - cx) * cosa + (y - cy) * (-sina)
    ly = (x - cx) * sina + (y - cy) * cosa
    return int(bool(-dx / f(2) < lx < dx / f(2) and -dy / f(2) < ly < dy / f(2)))


@pytest.mark.parametrize("device", DEVICES)
def test_points_in_boxes_follow_the_kernel_loop(device):
    boxes = _boxes3d(6, seed=0).unsqueeze(0)
    gen = torch.Generator().manual_seed(1)
    points = torch.rand(1, 150, 3, generator=gen) * torch.tensor([6.0, 6.0, 3.0]) - 1
    points = torch.cat([points, boxes[:, :, :3]], 1)  # each box's bottom centre: z bound, in
    every = points_in_boxes_all(points.to(device), boxes.to(device)).cpu()
    assert every.dtype == torch.int32 and every.shape == (1, 156, 6)
    expect = [[_in_box_loop(p.tolist(), b.tolist()) for b in boxes[0]] for p in points[0]]
    assert every[0].tolist() == expect
    assert every[0, 150:].diagonal().tolist() == [1] * 6
    assert torch.equal(points_in_boxes_cpu(points, boxes), every)
    first = points_in_boxes_part(points.to(device), boxes.to(device)).cpu()
    has = every.any(-1)
    assert first.dtype == torch.int32
    assert torch.equal(first[has], every.to(torch.uint8).argmax(-1)[has].to(torch.int32))
    assert torch.all(first[~has] == -1)


def test_points_in_boxes_cpu_equals_mmcv_full():
    case = load_reference("points", "points_in_boxes_cpu")
    assert torch.equal(points_in_boxes_cpu(case["points"], case["boxes"]), case["out"])
    assert torch.equal(points_in_boxes_all(case["points"], case["boxes"]), case["out"])


def test_points_in_boxes_bad_input_and_no_boxes():
    points = torch.rand(2, 5, 3)
    assert points_in_boxes_part(points, torch.zeros(2, 0, 7)).tolist() == [[-1] * 5] * 2
    assert points_in_boxes_all(points, torch.zeros(2, 0, 7)).shape == (2, 5, 0)
    with pytest.raises(AssertionError, match="batch size"):
        points_in_boxes_all(points, torch.zeros(1, 2, 7))
    with pytest.raises(AssertionError, match="boxes must have"):
        points_in_boxes_part(points, torch.zeros(2, 2, 6))


def _shapely_overlap(a, b):
    pa = shapely.geometry.Polygon(rotated_box_corners(a.double()).tolist())
    pb = shapely.geometry.Polygon(rotated_box_corners(b.double()).tolist())
    return pa.intersection(pb).area


def test_boxes_overlap_bev_and_iou3d_match_shapely():
    a, b = _boxes3d(12, seed=2, spread=3), _boxes3d(10, seed=3, spread=3)
    b[:3] = a[:3]  # identical boxes
    b[3, :6], b[3, 6] = a[3, [0, 1, 2, 4, 3, 5]], a[3, 6] + math.pi / 2  # same box, other axes
    overlap = boxes_overlap_bev(a, b)
    bev_a, bev_b = a[:, [0, 1, 3, 4, 6]], b[:, [0, 1, 3, 4, 6]]
    expect = torch.tensor([[_shapely_overlap(x, y) for y in bev_b] for x in bev_a])
    assert torch.allclose(overlap, expect.float(), atol=2e-5)
    iou = boxes_iou3d(a, b)
    h = (
        torch.min(a[:, None, 2] + a[:, None, 5] / 2, b[None, :, 2] + b[None, :, 5] / 2)
        - torch.max(a[:, None, 2] - a[:, None, 5] / 2, b[None, :, 2] - b[None, :, 5] / 2)
    ).clamp(min=0)
    vol_a, vol_b = a[:, 3:6].prod(1), b[:, 3:6].prod(1)
    inter = expect.float() * h
    assert torch.allclose(iou, inter / (vol_a[:, None] + vol_b[None] - inter), atol=1e-5)
    assert torch.allclose(iou[[0, 1, 2, 3], [0, 1, 2, 3]], torch.ones(4), atol=1e-5)


_coord = st.floats(-5, 5)
_size = st.floats(0.1, 4)
_angle = st.floats(-math.pi, math.pi)
_box = st.tuples(_coord, _coord, _coord, _size, _size, _size, _angle)


@settings(max_examples=40, deadline=None)
@given(st.lists(_box, min_size=1, max_size=4), st.lists(_box, min_size=1, max_size=4))
def test_iou3d_is_symmetric_bounded_and_one_on_itself(boxes_a, boxes_b):
    a, b = torch.tensor(boxes_a, dtype=torch.float64), torch.tensor(boxes_b, dtype=torch.float64)
    iou = boxes_iou3d(a, b)
    assert torch.allclose(iou, boxes_iou3d(b, a).T, atol=1e-9)
    assert bool(((iou >= 0) & (iou <= 1 + 1e-9)).all())
    assert torch.allclose(boxes_iou3d(a, a).diagonal(), torch.ones(len(a), dtype=torch.float64))
    bev = boxes_overlap_bev(a, b)
    assert bool(
        (bev <= torch.min(a[:, 3:5].prod(1)[:, None], b[:, 3:5].prod(1)[None]) + 1e-9).all()
    )


def _greedy(iou, scores, suppress):
    """Greedy NMS, one box at a time, on a precomputed IoU matrix."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    kept = []
    for i in order:
        if not any(suppress(iou[k][i]) for k in kept):
            kept.append(i)
    return kept


def test_nms3d_and_nms3d_normal_match_greedy_loops():
    boxes = _boxes3d(25, seed=4, spread=3)
    scores = torch.rand(25, generator=torch.Generator().manual_seed(5))
    bev = boxes[:, [0, 1, 3, 4, 6]]
    inter = [[_shapely_overlap(x, y) for y in bev] for x in bev]
    area = (bev[:, 2] * bev[:, 3]).tolist()
    iou = [
        [inter[i][j] / max(area[i] + area[j] - inter[i][j], 1e-8) for j in range(25)]
        for i in range(25)
    ]
    for thr in (0.05, 0.3):
        keep = nms3d(boxes, scores, thr)
        assert keep.dtype == torch.int64
        assert keep.tolist() == _greedy(iou, scores.tolist(), lambda v, t=thr: v > t)
    flat = boxes.clone()
    flat[:, 6] = 0
    flat_bev = flat[:, [0, 1, 3, 4, 6]]
    flat_iou = [[_shapely_overlap(x, y) for y in flat_bev] for x in flat_bev]
    flat_iou = [
        [flat_iou[i][j] / (area[i] + area[j] - flat_iou[i][j]) for j in range(25)]
        for i in range(25)
    ]
    assert nms3d_normal(boxes, scores, 0.2).tolist() == _greedy(
        flat_iou, scores.tolist(), lambda v: v > 0.2
    )
    assert nms3d(boxes[:0], scores[:0], 0.5).tolist() == []


def _bev_xyxyr(num, seed, spread):
    gen = torch.Generator().manual_seed(seed)
    x1y1 = torch.rand(num, 2, generator=gen) * spread
    wh = torch.rand(num, 2, generator=gen) * 3 + 0.5
    ry = (torch.rand(num, 1, generator=gen) * 2 - 1) * math.pi
    return torch.cat([x1y1, x1y1 + wh, ry], 1)


def _as_xywhr(boxes):
    return torch.stack(
        [
            (boxes[:, 0] + boxes[:, 2]) / 2,
            (boxes[:, 1] + boxes[:, 3]) / 2,
            boxes[:, 2] - boxes[:, 0],
            boxes[:, 3] - boxes[:, 1],
            boxes[:, 4],
        ],
        1,
    )


def test_boxes_iou_bev_and_nms_bev_match_shapely_and_greedy():
    a, b = _bev_xyxyr(8, 6, 4.0), _bev_xyxyr(9, 7, 4.0)
    with pytest.warns(DeprecationWarning, match="boxes_iou_bev"):
        iou = boxes_iou_bev(a, b)
    xa, xb = _as_xywhr(a), _as_xywhr(b)
    areas_a, areas_b = (xa[:, 2] * xa[:, 3]).tolist(), (xb[:, 2] * xb[:, 3]).tolist()
    for i in range(8):
        for j in range(9):
            inter = _shapely_overlap(xa[i], xb[j])
            assert iou[i, j] == pytest.approx(inter / (areas_a[i] + areas_b[j] - inter), abs=1e-5)
    boxes = _bev_xyxyr(30, 8, 5.0)
    scores = torch.rand(30, generator=torch.Generator().manual_seed(9))
    xb = _as_xywhr(boxes)
    area = (xb[:, 2] * xb[:, 3]).tolist()
    table = [[_shapely_overlap(x, y) for y in xb] for x in xb]
    table = [
        [table[i][j] / (area[i] + area[j] - table[i][j]) for j in range(30)] for i in range(30)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        keep = nms_bev(boxes, scores, 0.2)
        assert keep.tolist() == _greedy(table, scores.tolist(), lambda v: v >= 0.2)
        top = nms_bev(boxes, scores, 0.2, pre_max_size=10, post_max_size=3)
        ranked = sorted(range(30), key=lambda i: -scores[i])[:10]
        sub = [[table[i][j] for j in ranked] for i in ranked]
        expect = [
            ranked[k] for k in _greedy(sub, [scores[i].item() for i in ranked], lambda v: v >= 0.2)
        ][:3]
        assert top.tolist() == expect
        normal = nms_normal_bev(boxes, scores, 0.3)
    assert normal.dtype == torch.int64 and len(normal) <= 30


def test_boxes_iou_bev_and_nms_bev_equal_mmcv_full():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        case = load_reference("points", "boxes_iou_bev")
        iou = boxes_iou_bev(case["boxes_a"], case["boxes_b"])
        assert (iou - case["iou"]).abs().max() < 1e-5
        case = load_reference("points", "nms_bev")
        for thr in (0.1, 0.3, 0.7):
            assert torch.equal(nms_bev(case["boxes"], case["scores"], thr), case[f"keep_{thr}"])
        got = nms_bev(case["boxes"], case["scores"], 0.3, pre_max_size=100, post_max_size=20)
        assert torch.equal(got, case["keep_pre_post"])


def _roiaware_loop(rois, pts, feats, out_size, max_pts, mode):
    """mmcv's RoIAware kernels, one RoI and one point at a time."""
    ox, oy, oz = out_size
    channels = feats.shape[1]
    out = torch.zeros(len(rois), ox, oy, oz, channels, dtype=feats.dtype)
    for r, roi in enumerate(rois.tolist()):
        voxels = {}
        for p, point in enumerate(pts.tolist()):
            if not _in_box_loop(point, roi):
                continue
            cosa, sina = math.cos(-roi[6]), math.sin(-roi[6])
            lx = (point[0] - roi[0]) * cosa - (point[1] - roi[1]) * sina
            ly = (point[0] - roi[0]) * sina + (point[1] - roi[1]) * cosa
            ix = min(max(int((lx + roi[3] / 2) / (roi[3] / ox)), 0), ox - 1)
            iy = min(max(int((ly + roi[4] / 2) / (roi[4] / oy)), 0), oy - 1)
            iz = min(max(int((point[2] - roi[2]) / (roi[5] / oz)), 0), oz - 1)
            cell = voxels.setdefault((ix, iy, iz), [])
            if len(cell) < max_pts - 1:
                cell.append(p)
        for (ix, iy, iz), members in voxels.items():
            chosen = feats[members]
            out[r, ix, iy, iz] = chosen.max(0)[0] if mode == "max" else chosen.mean(0)
    return out


@pytest.mark.parametrize("mode", ["max", "avg"])
def test_roiaware_pool3d_follows_the_kernel_loop_and_gradchecks(mode):
    rois = _boxes3d(3, seed=10, spread=1.0)
    rois[:, 3:6] += 1.5
    gen = torch.Generator().manual_seed(11)
    pts = torch.rand(60, 3, generator=gen) * 3 - 1
    feats = torch.rand(60, 2, generator=gen, dtype=torch.float64)
    pool = RoIAwarePool3d((2, 3, 2), max_pts_per_voxel=4, mode=mode)
    out = pool(rois, pts, feats)
    assert out.shape == (3, 2, 3, 2, 2)
    expect = _roiaware_loop(rois, pts, feats, (2, 3, 2), 4, mode)
    assert torch.allclose(out, expect)
    assert out.abs().sum() > 0
    feats.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda f: pool(rois.double(), pts.double(), f), (feats,))
    assert pool.mode == {"max": 0, "avg": 1}[mode] and pool.out_size == (2, 3, 2)


def test_roiaware_pool3d_bad_mode_and_sizes():
    with pytest.raises(AssertionError):
        RoIAwarePool3d(2, mode="sum")
    with pytest.raises(ValueError, match="out_size"):
        RoIAwarePool3d(256)(_boxes3d(1, 0), torch.rand(4, 3), torch.rand(4, 2))
    with pytest.raises(AssertionError, match="pts_feature"):
        RoIAwarePool3d(2)(_boxes3d(1, 0), torch.rand(4, 3), torch.rand(5, 2))


def _roipoint_loop(points, feats, boxes, samples):
    """mmcv's RoIPointPool3d kernels, one box at a time."""
    batch, num_boxes = boxes.shape[:2]
    out = torch.zeros(batch, num_boxes, samples, 3 + feats.shape[2])
    empty = torch.zeros(batch, num_boxes, dtype=torch.int32)
    for b in range(batch):
        for m in range(num_boxes):
            inside = [
                k
                for k in range(points.shape[1])
                if _in_box_loop(points[b, k].tolist(), boxes[b, m].tolist())
            ][:samples]
            if not inside:
                empty[b, m] = 1
                continue
            for s in range(samples):
                k = inside[s % len(inside)]
                out[b, m, s] = torch.cat([points[b, k], feats[b, k]])
    return out, empty


def test_roipoint_pool3d_follows_the_kernel_loop():
    gen = torch.Generator().manual_seed(12)
    points = torch.rand(2, 80, 3, generator=gen) * 4 - 1
    feats = torch.rand(2, 80, 3, generator=gen)
    boxes = torch.stack([_boxes3d(4, seed=13, spread=2.0), _boxes3d(4, seed=14, spread=2.0)])
    boxes[1, 3, :3] = 50  # far from every point: empty
    pooled, empty = RoIPointPool3d(num_sampled_points=6)(points, feats, boxes)
    expect, expect_empty = _roipoint_loop(points, feats, boxes, 6)
    assert pooled.shape == (2, 4, 6, 6) and empty.dtype == torch.int32
    assert torch.equal(empty, expect_empty) and empty[1, 3] == 1
    assert torch.equal(pooled, expect)
    with pytest.raises(AssertionError, match="points"):
        RoIPointPool3d()(points[..., :2], feats, boxes)
