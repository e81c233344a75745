"""The rotated / quadrilateral / polygon ops against independent references.

shapely for areas, IoU and point-in-polygon, OpenCV's minAreaRect for min_area_polygons,
loops that follow mmcv's kernels for the sampling ops, gradcheck for the differentiable ones.
(The ops that have an mmcv-full CPU kernel are also compared with its stored outputs, in
test_rotated_reference.py.)
"""

import math

import cv2
import numpy as np
import pytest
import torch
from helpers.ops_reference import mmcv_bilinear
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely.geometry import MultiPoint, Point, Polygon

from mmpar.ops import (
    RiRoIAlignRotated,
    RoIAlignRotated,
    active_rotated_filter,
    batched_nms,
    box_iou_quadri,
    box_iou_rotated,
    convex_giou,
    convex_iou,
    diff_iou_rotated_2d,
    diff_iou_rotated_3d,
    min_area_polygons,
    nms_quadri,
    nms_rotated,
    points_in_polygons,
    riroi_align_rotated,
    roi_align,
    roi_align_rotated,
    rotated_feature_align,
)

F64 = torch.float64


def rotated_boxes(count, extent=20.0, seed=0, dtype=F64):
    gen = torch.Generator().manual_seed(seed)
    boxes = torch.rand(count, 5, generator=gen, dtype=dtype)
    boxes[:, :2] *= extent
    boxes[:, 2:4] = boxes[:, 2:4] * extent / 3 + 0.5
    boxes[:, 4] = (boxes[:, 4] - 0.5) * 2 * math.pi
    return boxes


def corners(box):
    """Corners of one (x, y, w, h, angle) box, clockwise angle in image coordinates."""
    x, y, w, h, a = box.tolist()
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    local = np.array([[-w, -h], [w, -h], [w, h], [-w, h]]) / 2
    return local @ rot.T + [x, y]


def shapely_iou(poly1, poly2, mode="iou"):
    inter = poly1.intersection(poly2).area
    return inter / (poly1.area if mode == "iof" else poly1.union(poly2).area)


def random_convex_quads(count, seed):
    """Convex quadrilaterals: 4 points at sorted random angles on a jittered ellipse."""
    gen = torch.Generator().manual_seed(seed)
    angles = torch.sort(torch.rand(count, 4, generator=gen, dtype=F64) * 2 * math.pi)[0]
    radius = torch.rand(count, 1, generator=gen, dtype=F64) * 6 + 1
    center = torch.rand(count, 1, 2, generator=gen, dtype=F64) * 15
    quads = center + radius[..., None] * torch.stack([angles.cos(), angles.sin()], -1)
    flip = torch.rand(count, generator=gen) < 0.5  # both orientations
    quads[flip] = quads[flip].flip(1)
    return quads.flatten(1)


# ---------------------------------------------------------------- box_iou_rotated / quadri


@pytest.mark.parametrize("mode", ["iou", "iof"])
def test_box_iou_rotated_matches_shapely(mode):
    boxes1, boxes2 = rotated_boxes(25, seed=1), rotated_boxes(20, seed=2)
    boxes2[:3] = boxes1[:3]  # identical
    # A box that shares a whole edge with another, from outside: IoU 0.
    shift = boxes1[4].clone()
    shift[0] += shift[2] * math.cos(shift[4])
    shift[1] += shift[2] * math.sin(shift[4])
    boxes2[4] = shift
    ious = box_iou_rotated(boxes1, boxes2, mode)
    polys1 = [Polygon(corners(b)) for b in boxes1]
    polys2 = [Polygon(corners(b)) for b in boxes2]
    expected = torch.tensor([[shapely_iou(p, q, mode) for q in polys2] for p in polys1], dtype=F64)
    assert ious.shape == (25, 20) and ious.dtype == F64
    torch.testing.assert_close(ious, expected, rtol=0, atol=1e-9)
    assert ious[4, 4] == pytest.approx(0, abs=1e-9)
    assert (ious > 0.05).sum() > 10  # the case has real overlaps


def test_box_iou_rotated_aligned_clockwise_and_float32_far_from_origin():
    boxes1, boxes2 = rotated_boxes(30, seed=3), rotated_boxes(30, seed=4)
    full = box_iou_rotated(boxes1, boxes2)
    torch.testing.assert_close(box_iou_rotated(boxes1, boxes2, aligned=True), full.diagonal())
    # Counter-clockwise angles describe the mirrored boxes: negating the angles is the same.
    mirrored = boxes1 * torch.tensor([1, 1, 1, 1, -1], dtype=F64)
    mirrored2 = boxes2 * torch.tensor([1, 1, 1, 1, -1], dtype=F64)
    torch.testing.assert_close(box_iou_rotated(mirrored, mirrored2, clockwise=False), full)
    # float32 at coordinates ~1e4: each pair is measured around its own centre.
    far = torch.tensor([1e4, 1e4, 0, 0, 0], dtype=F64)
    ious32 = box_iou_rotated((boxes1 + far).float(), (boxes2 + far).float())
    assert ious32.dtype == torch.float32
    torch.testing.assert_close(ious32.double(), full, rtol=0, atol=2e-3)


def test_box_iou_quadri_matches_shapely_for_convex_quadrilaterals():
    quads1, quads2 = random_convex_quads(20, 5), random_convex_quads(15, 6)
    polys1 = [Polygon(q.view(4, 2).tolist()) for q in quads1]
    polys2 = [Polygon(q.view(4, 2).tolist()) for q in quads2]
    for mode in ("iou", "iof"):
        expected = torch.tensor(
            [[shapely_iou(p, q, mode) for q in polys2] for p in polys1], dtype=F64
        )
        torch.testing.assert_close(
            box_iou_quadri(quads1, quads2, mode), expected, rtol=0, atol=1e-9
        )
    torch.testing.assert_close(
        box_iou_quadri(quads1[:15], quads2, aligned=True),
        box_iou_quadri(quads1[:15], quads2).diagonal(),
    )


box_strategy = st.tuples(
    st.floats(-50, 50),
    st.floats(-50, 50),
    st.floats(0.5, 30),
    st.floats(0.5, 30),
    st.floats(-7, 7),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(box_strategy, min_size=1, max_size=6))
def test_box_iou_rotated_properties(boxes):
    boxes = torch.tensor(boxes, dtype=F64)
    ious = box_iou_rotated(boxes, boxes)
    assert ((ious >= 0) & (ious <= 1 + 1e-9)).all()
    torch.testing.assert_close(ious, ious.T)
    torch.testing.assert_close(ious.diagonal(), torch.ones(len(boxes), dtype=F64))


@pytest.mark.parametrize("dtype", [torch.float32, F64])
def test_box_iou_rotated_with_collinear_edges(dtype):
    # Found by hypothesis: the 9 x 1 box lies in the 9 x 18 one with both short sides on its
    # long sides; rounding made those collinear edges "cross" anywhere along them.
    boxes = torch.tensor([[0.0, 0, 9, 1, 1.25], [0, 0, 9, 18, 1.25]], dtype=dtype)
    ious = box_iou_rotated(boxes, boxes)
    expected = torch.tensor([[1, 9 / 162], [9 / 162, 1]], dtype=dtype)
    torch.testing.assert_close(ious, expected, rtol=0, atol=1e-6)


def test_box_iou_bad_input_and_empty():
    boxes = rotated_boxes(3)
    with pytest.raises(ValueError, match=r"box_iou_rotated: bboxes2 must have shape \(N, 5\)"):
        box_iou_rotated(boxes, boxes[:, :4])
    with pytest.raises(ValueError, match="aligned=True needs as many boxes"):
        box_iou_rotated(boxes, boxes[:2], aligned=True)
    with pytest.raises(AssertionError, match="mode"):
        box_iou_rotated(boxes, boxes, "giou")
    with pytest.raises(ValueError, match=r"box_iou_quadri: bboxes1 must have shape \(N, 8\)"):
        box_iou_quadri(boxes, boxes)
    assert box_iou_rotated(boxes[:0], boxes).shape == (0, 3)
    # A box without area overlaps nothing (as mmcv's kernel).
    flat = boxes.clone()
    flat[0, 2] = 0
    assert box_iou_rotated(flat, boxes)[0].eq(0).all()


# ---------------------------------------------------------------- nms_rotated / quadri


def greedy_nms(ious, scores, threshold, labels=None):
    order = sorted(range(len(scores)), key=lambda i: -float(scores[i]))
    keep, removed = [], set()
    for pos, i in enumerate(order):
        if i in removed:
            continue
        keep.append(i)
        for j in order[pos + 1 :]:
            same = labels is None or labels[i] == labels[j]
            if same and ious[i][j] > threshold:
                removed.add(j)
    return keep


@pytest.mark.parametrize("threshold", [0.1, 0.5])
def test_nms_rotated_matches_greedy_nms_on_shapely_ious(threshold):
    boxes = rotated_boxes(80, extent=30, seed=7)
    scores = torch.rand(80, generator=torch.Generator().manual_seed(8), dtype=F64)
    polys = [Polygon(corners(b)) for b in boxes]
    ious = [[shapely_iou(p, q) for q in polys] for p in polys]
    dets, keep = nms_rotated(boxes, scores, threshold)
    assert keep.dtype == torch.int64 and keep.tolist() == greedy_nms(ious, scores, threshold)
    torch.testing.assert_close(dets, torch.cat([boxes[keep], scores[keep, None]], 1))
    labels = torch.arange(80) % 3
    _, keep = nms_rotated(boxes, scores, threshold, labels)
    assert keep.tolist() == greedy_nms(ious, scores, threshold, labels.tolist())
    quads = torch.tensor(np.stack([corners(b) for b in boxes]), dtype=F64).flatten(1)
    dets, keep_q = nms_quadri(quads, scores, threshold)
    assert keep_q.tolist() == greedy_nms(ious, scores, threshold) and dets.shape[1] == 9


def test_nms_rotated_empty_and_bad_input():
    empty = torch.zeros(0, 5)
    dets, keep = nms_rotated(empty, torch.zeros(0), 0.5)
    assert dets.shape == (0, 5) and keep is None
    with pytest.raises(ValueError, match=r"nms_rotated: scores must be a tensor \(N,\)"):
        nms_rotated(torch.rand(3, 5), torch.rand(4), 0.5)
    with pytest.raises(ValueError, match=r"nms_quadri: dets must have shape \(N, 8\)"):
        nms_quadri(torch.rand(3, 5), torch.rand(3), 0.5)


def test_batched_nms_rotated_keeps_classes_apart():
    boxes = rotated_boxes(40, extent=15, seed=9).float()
    scores = torch.rand(40, generator=torch.Generator().manual_seed(10))
    idxs = torch.arange(40) % 2
    dets, keep = batched_nms(boxes, scores, idxs, dict(type="nms_rotated", iou_threshold=0.3))
    expected = []
    for cls in (0, 1):
        members = torch.nonzero(idxs == cls).squeeze(1)
        expected += members[nms_rotated(boxes[members], scores[members], 0.3)[1]].tolist()
    assert sorted(keep.tolist()) == sorted(expected)
    assert dets.shape == (len(expected), 6)
    assert torch.equal(dets[:, -1], scores[keep]) and (dets[:-1, -1] >= dets[1:, -1]).all()
    # The split path (one NMS per class) gives the same.
    _, keep_split = batched_nms(
        boxes, scores, idxs, dict(type="nms_rotated", iou_threshold=0.3, split_thr=2)
    )
    assert torch.equal(keep_split, keep)


# ---------------------------------------------------------------- RoI / feature sampling


def test_roi_align_rotated_at_angle_zero_is_roi_align():
    features = torch.rand(2, 3, 10, 12, dtype=F64)
    rois = torch.tensor([[0, 5.0, 4.0, 4.0, 3.0, 0.0], [1, 6.5, 5.2, 6.0, 5.0, 0.0]], dtype=F64)
    boxes = torch.cat(
        [rois[:, :1], rois[:, 1:3] - rois[:, 3:5] / 2, rois[:, 1:3] + rois[:, 3:5] / 2], 1
    )
    for aligned, ratio in ((True, 2), (True, 0), (False, 0)):
        got = roi_align_rotated(features, rois, (3, 2), 1.0, ratio, aligned)
        expected = roi_align(features, boxes, (3, 2), 1.0, ratio, "avg", aligned)
        torch.testing.assert_close(got, expected)


def test_roi_align_rotated_quarter_turn_rotates_the_output():
    # A square RoI at the centre of a square map turned by 90 degrees samples the map rotated.
    features = torch.rand(1, 2, 8, 8, dtype=F64)
    roi = torch.tensor([[0, 4.0, 4.0, 6.0, 6.0, 0.0]], dtype=F64)
    turned = roi.clone()
    turned[0, 5] = math.pi / 2
    straight = roi_align_rotated(features, roi, 3, 1.0, 2, True, False)
    rotated = roi_align_rotated(features, turned, 3, 1.0, 2, True, False)
    # Counter-clockwise angle in image space: output (i, j) samples where straight had (n-1-j, i).
    torch.testing.assert_close(rotated, torch.rot90(straight, -1, dims=(2, 3)))


def test_roi_align_rotated_gradcheck_layer_and_bad_input():
    features = torch.rand(2, 2, 6, 7, dtype=F64, requires_grad=True)
    rois = torch.tensor([[0, 3.0, 3.0, 4.0, 3.0, 0.6], [1, 2.5, 4.0, 3.0, 5.0, -1.2]], dtype=F64)
    assert torch.autograd.gradcheck(
        lambda x: roi_align_rotated(x, rois, 2, 1.0, 0, True, True), (features,)
    )
    layer = RoIAlignRotated(2, 1.0, clockwise=True)
    assert repr(layer) == (
        "RoIAlignRotated(output_size=(2, 2), spatial_scale=1.0, sampling_ratio=0, "
        "aligned=True, clockwise=True)"
    )
    torch.testing.assert_close(
        layer(features, rois), roi_align_rotated(features, rois, 2, 1.0, 0, True, True)
    )
    with pytest.warns(DeprecationWarning):
        assert RoIAlignRotated(out_size=2, spatial_scale=1.0, sample_num=3).sampling_ratio == 3
    bad = rois.clone()
    bad[1, 0] = 2
    with pytest.raises(ValueError, match=r"batch index is outside \[0, 2\)"):
        roi_align_rotated(features, bad, 2)
    with pytest.raises(ValueError, match=r"rois must be \(K, 6\)"):
        roi_align_rotated(features, rois[:, :5], 2)
    assert roi_align_rotated(features, rois[:0], 2).shape == (0, 2, 2, 2)
    assert riroi_align_rotated(features, rois[:0], 2, 1.0, 0, 2).shape == (0, 2, 2, 2)


def test_riroi_align_rotated_turns_orientation_channels():
    orientations = 4
    features = torch.rand(1, 2 * orientations, 9, 9, dtype=F64, requires_grad=True)
    for step in (0, 1, 3):
        rois = torch.tensor([[0, 4.0, 4.0, 5.0, 3.0, step * 2 * math.pi / orientations]], dtype=F64)
        got = riroi_align_rotated(features, rois, (2, 3), 1.0, 2, orientations)
        plain = roi_align_rotated(features, rois, (2, 3), 1.0, 2, False, False)
        # Output orientation o takes input orientation o - step of the same group.
        plain = plain.view(1, 2, orientations, 2, 3).roll(step, dims=2).view(1, -1, 2, 3)
        torch.testing.assert_close(got, plain)
    # Half a step: the mean of the two neighbouring orientations.
    rois[0, 5] = 0.5 * 2 * math.pi / orientations
    got = riroi_align_rotated(features, rois, 2, 1.0, 2, orientations)
    plain = roi_align_rotated(features, rois, 2, 1.0, 2, False, False).view(
        1, 2, orientations, 2, 2
    )
    expected = (plain + plain.roll(-1, dims=2)) / 2
    torch.testing.assert_close(got, expected.view(1, -1, 2, 2))
    assert torch.autograd.gradcheck(
        lambda x: riroi_align_rotated(x, rois, 2, 1.0, 0, orientations), (features,)
    )
    layer = RiRoIAlignRotated((2, 2), 1.0, 2, orientations)
    torch.testing.assert_close(layer(features, rois), got)
    with pytest.raises(ValueError, match="not a multiple of num_orientations=3"):
        riroi_align_rotated(features, rois, 2, 1.0, 0, 3)
    with pytest.raises(TypeError, match="out_size"):
        riroi_align_rotated(features, rois, 2.5, 1.0)


@pytest.mark.parametrize("points", [1, 5])
def test_rotated_feature_align_matches_a_loop_over_mmcvs_kernel(points):
    gen = torch.Generator().manual_seed(11)
    features = torch.rand(1, 2, 5, 6, generator=gen, dtype=F64, requires_grad=True)
    boxes = torch.rand(1, 5, 6, 5, generator=gen, dtype=F64)
    boxes[..., :2] = boxes[..., :2] * 56 - 4
    boxes[..., 2:4] *= 30
    boxes[..., 4] *= 6
    got = rotated_feature_align(features, boxes, 1 / 8, points)
    feats = features.detach().numpy()[0]
    expected = np.empty_like(feats)
    for c in range(2):
        for h in range(5):
            for w in range(6):
                y, x, bw, bh, a = (
                    boxes[0, h, w] * torch.tensor([1 / 8] * 4 + [1], dtype=F64)
                ).tolist()
                pts = [(y, x)]
                if points == 5:
                    wx, wy = math.cos(a) * bw / 2, math.sin(a) * bw / 2
                    hx, hy = -math.sin(a) * bh / 2, math.cos(a) * bh / 2
                    pts += [
                        (y + sw * wy + sh * hy, x + sw * wx + sh * hx)
                        for sw, sh in ((1, 1), (-1, 1), (-1, -1), (1, -1))
                    ]
                expected[c, h, w] = feats[c, h, w] + sum(
                    mmcv_bilinear(feats[c], py, px) for py, px in pts
                )
    torch.testing.assert_close(got[0], torch.from_numpy(expected))
    assert torch.autograd.gradcheck(
        lambda x: rotated_feature_align(x, boxes, 1 / 8, points), (features,)
    )
    with pytest.raises(AssertionError, match="points must be 1 or 5"):
        rotated_feature_align(features, boxes, 1 / 8, 3)


def test_active_rotated_filter_matches_a_loop_and_gradcheck():
    gen = torch.Generator().manual_seed(12)
    weights = torch.rand(2, 3, 4, 3, 3, generator=gen, dtype=F64, requires_grad=True)
    entries, rotations = 4 * 9, 4
    indices = torch.stack([torch.randperm(entries, generator=gen) for _ in range(rotations)], -1)
    indices = (indices + 1).reshape(4, 3, 3, rotations).int()
    got = active_rotated_filter(weights, indices)
    flat_in = weights.detach().reshape(2, 3, entries)
    expected = torch.zeros(2, rotations, 3, entries, dtype=F64)
    flat_idx = indices.reshape(entries, rotations)
    for i in range(2):
        for j in range(3):
            for tap in range(entries):
                for k in range(rotations):
                    expected[i, k, j, flat_idx[tap, k] - 1] = flat_in[i, j, tap]
    torch.testing.assert_close(got, expected.reshape(2 * rotations, 3 * 4, 3, 3))
    assert torch.autograd.gradcheck(lambda x: active_rotated_filter(x, indices), (weights,))
    with pytest.raises(ValueError, match=r"indices must be in \[1, 36\]"):
        active_rotated_filter(weights, indices - 1)


# ---------------------------------------------------------------- polygons


def test_points_in_polygons_matches_shapely():
    gen = torch.Generator().manual_seed(13)
    points = torch.rand(300, 2, generator=gen) * 12 - 1
    polygons = torch.cat(
        [random_convex_quads(6, 14).float() * 0.6, torch.tensor([[0.0, 0, 5, 0, 5, 5, 0, 5]])]
    )
    got = points_in_polygons(points, polygons)
    expected = torch.tensor(
        [
            [float(Polygon(q.view(4, 2).tolist()).contains(Point(*p.tolist()))) for q in polygons]
            for p in points
        ]
    )
    assert got.dtype == torch.float32 and torch.equal(got, expected) and expected.sum() > 20
    with pytest.raises(AssertionError, match="polygons must be"):
        points_in_polygons(points, polygons[:, :6])


def test_min_area_polygons_matches_opencv_min_area_rect():
    gen = torch.Generator().manual_seed(15)
    pointsets = torch.randn(40, 18, generator=gen, dtype=F64) * torch.tensor(
        [6.0, 2.0] * 9, dtype=F64
    )
    pointsets += torch.rand(40, 1, generator=gen, dtype=F64) * 50
    rects = min_area_polygons(pointsets)
    assert rects.shape == (40, 8)
    for pointset, rect in zip(pointsets, rects):
        (_, _), (w, h), _ = cv2.minAreaRect(pointset.view(9, 2).numpy().astype(np.float32))
        poly = Polygon(rect.view(4, 2).tolist())
        assert poly.area == pytest.approx(w * h, rel=1e-4)
        assert poly.buffer(1e-6).contains(MultiPoint(pointset.view(9, 2).tolist()))


def hull_polygon_pairs():
    gen = torch.Generator().manual_seed(16)
    pointsets = torch.randn(12, 18, generator=gen, dtype=F64) * 2 + 5
    polygons = random_convex_quads(4, 17) * 0.5 + 2
    return pointsets, polygons


def test_convex_iou_matches_shapely():
    pointsets, polygons = hull_polygon_pairs()
    got = convex_iou(pointsets, polygons)
    hulls = [MultiPoint(p.view(9, 2).tolist()).convex_hull for p in pointsets]
    quads = [Polygon(q.view(4, 2).tolist()) for q in polygons]
    expected = torch.tensor([[shapely_iou(h, q) for q in quads] for h in hulls], dtype=F64)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-9)
    assert (expected > 0.05).sum() > 5


def shapely_giou(pointset, polygon):
    hull = MultiPoint(pointset.view(9, 2).tolist()).convex_hull
    quad = Polygon(polygon.view(4, 2).tolist())
    union = hull.union(quad).area
    enclosing = MultiPoint(
        pointset.view(9, 2).tolist() + polygon.view(4, 2).tolist()
    ).convex_hull.area
    return hull.intersection(quad).area / union - (enclosing - union) / enclosing


def test_convex_giou_and_its_gradient_match_shapely_with_finite_differences():
    pointsets, polygons = hull_polygon_pairs()
    pointsets, polygons = pointsets[:4], polygons
    giou, grad = convex_giou(pointsets, polygons)
    expected = torch.tensor([shapely_giou(p, q) for p, q in zip(pointsets, polygons)], dtype=F64)
    torch.testing.assert_close(giou, expected, rtol=0, atol=1e-9)
    eps = 1e-6
    numeric = torch.zeros_like(grad)
    for i in range(4):
        for k in range(18):
            step = torch.zeros(18, dtype=F64)
            step[k] = eps
            plus = shapely_giou(pointsets[i] + step, polygons[i])
            minus = shapely_giou(pointsets[i] - step, polygons[i])
            numeric[i, k] = (plus - minus) / (2 * eps)
    torch.testing.assert_close(grad, numeric, rtol=0, atol=1e-6)
    assert not giou.requires_grad and grad.abs().sum() > 0
    with pytest.raises(ValueError, match="one polygon per point set"):
        convex_giou(pointsets, polygons[:2])


def test_diff_iou_rotated_2d_and_3d_match_shapely_and_gradcheck():
    gen = torch.Generator().manual_seed(18)
    scale = torch.tensor([8, 8, 5, 5, 6], dtype=F64)
    box1 = (
        torch.rand(2, 5, 5, generator=gen, dtype=F64) * scale + torch.tensor([0, 0, 1, 1, 0])
    ).requires_grad_()
    box2 = (
        torch.rand(2, 5, 5, generator=gen, dtype=F64) * scale + torch.tensor([0, 0, 1, 1, 0])
    ).requires_grad_()
    got = diff_iou_rotated_2d(box1, box2)
    # mmcv's diff_iou box: corner (w/2, h/2) turned counter-clockwise by alpha; IoU is the
    # same for the mirrored (clockwise) convention, so corners() serves.
    expected = torch.tensor(
        [
            [shapely_iou(Polygon(corners(a)), Polygon(corners(b))) for a, b in zip(r1, r2)]
            for r1, r2 in zip(box1.detach(), box2.detach())
        ],
        dtype=F64,
    )
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-9)
    assert expected.gt(0).sum() > 2
    assert torch.autograd.gradcheck(diff_iou_rotated_2d, (box1, box2))
    z = torch.rand(2, 5, 2, generator=gen, dtype=F64) * torch.tensor(
        [2, 3], dtype=F64
    ) + torch.tensor([0, 1], dtype=F64)
    box3d1 = torch.cat(
        [box1[..., :2], z[..., :1], box1[..., 2:4], z[..., 1:], box1[..., 4:]], -1
    ).detach()
    box3d2 = torch.cat(
        [box2[..., :2], z[..., :1] + 0.5, box2[..., 2:4], z[..., 1:], box2[..., 4:]], -1
    ).detach()
    got3d = diff_iou_rotated_3d(box3d1, box3d2)
    overlap = (z[..., 1] - 0.5).clamp(min=0)
    inter = expected * 0  # from the 2-D IoU: inter = iou * (a1 + a2) / (1 + iou)
    a1, a2 = box1[..., 2] * box1[..., 3], box2[..., 2] * box2[..., 3]
    inter = (expected * (a1 + a2) / (1 + expected)).detach() * overlap
    v1, v2 = (a1 * z[..., 1]).detach(), (a2 * z[..., 1]).detach()
    torch.testing.assert_close(got3d, inter / (v1 + v2 - inter))
    assert torch.autograd.gradcheck(
        diff_iou_rotated_3d, (box3d1.requires_grad_(), box3d2.requires_grad_())
    )
    with pytest.raises(ValueError, match=r"\(B, N, 7\)"):
        diff_iou_rotated_3d(box1, box2)
