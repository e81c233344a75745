"""The steps of mmcv's diff_iou_rotated construction, against mmpar's diff_iou_rotated_2d."""

from __future__ import annotations

import pytest
import torch
from helpers.mmcv_reference import load_reference
from hypothesis import given, settings
from hypothesis import strategies as st

from mmpar.ops.diff_iou_rotated import (
    EPSILON,
    SortVertices,
    box1_in_box2,
    box2corners,
    box_in_box,
    box_intersection,
    build_vertices,
    calculate_area,
    diff_iou_rotated_2d,
    oriented_box_intersection_2d,
    sort_indices,
)

SQUARE_A = torch.tensor([[[[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]]]])
SQUARE_B = SQUARE_A + 1  # overlaps SQUARE_A in the unit square [1, 2] x [1, 2]


def _iou(box1, box2):
    """IoU from oriented_box_intersection_2d, as mmcv's diff_iou_rotated_2d forms it."""
    area, _ = oriented_box_intersection_2d(box2corners(box1), box2corners(box2))
    union = box1[..., 2] * box1[..., 3] + box2[..., 2] * box2[..., 3] - area
    return area / union


def _random_boxes(g, n):
    centre = torch.rand(1, n, 2, generator=g, dtype=torch.float64) * 4
    size = torch.rand(1, n, 2, generator=g, dtype=torch.float64) * 3 + 0.5
    angle = torch.rand(1, n, 1, generator=g, dtype=torch.float64) * 6.3
    return torch.cat([centre, size, angle], -1)


def test_hand_made_squares():
    points, valid = box_intersection(SQUARE_A, SQUARE_B)
    assert points.shape == (1, 1, 4, 4, 1, 2) and valid.shape == (1, 1, 4, 4, 1)  # as mmcv's
    # Edge 1 of A (x = 2) meets edge 0 of B (y = 1); edge 2 of A (y = 2) meets edge 3 of B.
    assert valid.nonzero()[:, 2:4].tolist() == [[1, 0], [2, 3]]
    assert points[0, 0, 1, 0, 0].tolist() == [2, 1] and points[0, 0, 2, 3, 0].tolist() == [1, 2]
    assert not points[~valid].any()
    assert box1_in_box2(SQUARE_A, SQUARE_B).tolist() == [[[False, False, True, False]]]
    a_in_b, b_in_a = box_in_box(SQUARE_A, SQUARE_B)
    assert a_in_b.tolist() == [[[False, False, True, False]]]
    assert b_in_a.tolist() == [[[True, False, False, False]]]
    vertices, mask = build_vertices(SQUARE_A, SQUARE_B, a_in_b, b_in_a, points, valid)
    assert vertices.shape == (1, 1, 24, 2) and mask.sum() == 4
    idx = sort_indices(vertices, mask)
    assert idx.dtype == torch.int64 and idx.shape == (1, 1, 9)
    # Counter-clockwise from the positive x axis around the centre (1.5, 1.5): the corner
    # (2, 2) of A, (1, 2), (1, 1) of B, then (2, 1); the first again, then padding.
    assert idx[0, 0, :5].tolist() == [2, 19, 4, 12, 2]
    assert all(i >= 8 and not mask[0, 0, i] for i in idx[0, 0, 5:].tolist())
    area, polygon = calculate_area(idx, vertices)
    assert area.tolist() == [[1.0]] and polygon.shape == (1, 1, 9, 2)


def test_equal_boxes_give_each_corner_once():
    vertices, mask = build_vertices(
        SQUARE_A, SQUARE_A, *box_in_box(SQUARE_A, SQUARE_A), *box_intersection(SQUARE_A, SQUARE_A)
    )
    assert mask[0, 0, :8].all() and not mask[0, 0, 8:].any()
    idx = sort_indices(vertices, mask)[0, 0].tolist()
    assert idx[:5] == [2, 3, 0, 1, 2] and all(i >= 8 for i in idx[5:])
    assert calculate_area(sort_indices(vertices, mask), vertices)[0].item() == 4.0


def test_sort_vertices_pads_fewer_than_three():
    vertices = torch.zeros(1, 1, 24, 2)
    mask = torch.zeros(1, 1, 24, dtype=torch.bool)
    mask[0, 0, [0, 8]] = True
    idx = SortVertices.apply(vertices, mask, mask.sum(-1).int())
    assert idx.dtype == torch.int32 and idx.tolist() == [[[9] * 9]]


def test_matches_diff_iou_rotated_2d_with_gradients():
    g = torch.Generator().manual_seed(3)
    box1, box2 = _random_boxes(g, 300), _random_boxes(g, 300)
    box2[:, :5] = box1[:, :5]  # equal pairs
    box2[:, 5:10, :2] = box1[:, 5:10, :2] + 50  # far apart
    box2[:, 10:15] = box1[:, 10:15] * torch.tensor([1, 1, 0.3, 0.3, 1.0])  # inside
    box1.requires_grad_()
    ours = _iou(box1, box2)
    expected = diff_iou_rotated_2d(box1, box2)
    assert (expected > 0).float().mean() > 0.3  # the sample has many overlaps
    torch.testing.assert_close(ours, expected, rtol=0, atol=1e-7)
    (grad,) = torch.autograd.grad(ours.sum(), box1)
    (ref_grad,) = torch.autograd.grad(expected.sum(), box1)
    # Equal boxes sit on a kink of the IoU, where each construction picks its own one-sided
    # derivative; elsewhere the gradients agree.
    torch.testing.assert_close(grad[:, 5:], ref_grad[:, 5:], rtol=1e-5, atol=1e-5)


def test_nearly_equal_boxes():
    # Corners and crossings a rounding error apart, crossings along nearly collinear edges:
    # more candidates than mmcv's 9 slots hold, where its kernel writes past them.
    g = torch.Generator().manual_seed(1)
    box1 = _random_boxes(g, 2000)
    noise = torch.randn(1, 2000, 5, generator=g, dtype=torch.float64) * 1e-7
    box2 = box1 + noise * torch.tensor([1.0, 1, 0, 0, 1])
    box3 = box1.clone()
    box3[..., 4] += torch.randint(0, 4, (1, 2000), generator=g) * (torch.pi / 2)
    for other in (box2, box3):
        # mmcv's 1e-6 containment tolerance bounds the difference.
        torch.testing.assert_close(
            _iou(box1, other), diff_iou_rotated_2d(box1, other), rtol=0, atol=1e-5
        )


_coordinate = st.floats(-3, 3)
_size = st.floats(0.2, 3)
_angle = st.floats(0, 6.3)


@settings(max_examples=80, deadline=None)
@given(
    st.tuples(_coordinate, _coordinate, _size, _size, _angle),
    st.tuples(_coordinate, _coordinate, _size, _size, _angle),
)
def test_property_area_is_the_polygon_intersection(first, second):
    box1 = torch.tensor([[first]], dtype=torch.float64)
    box2 = torch.tensor([[second]], dtype=torch.float64)
    area, _ = oriented_box_intersection_2d(box2corners(box1), box2corners(box2))
    expected = diff_iou_rotated_2d(box1, box2)
    union = box1[..., 2] * box1[..., 3] + box2[..., 2] * box2[..., 3] - area
    # mmcv's tolerance: a corner within 1e-6 of a side's length outside the other box counts
    # as inside.
    assert area / union == pytest.approx(expected, abs=1e-5)


def test_epsilon_is_mmcvs():
    assert EPSILON == 1e-8


def test_steps_match_mmcv_full():
    ref = load_reference("autograd_functions", "diff_iou_steps")
    corners1, corners2 = box2corners(ref["box1"]), box2corners(ref["box2"])
    torch.testing.assert_close(corners1, ref["corners1"])
    torch.testing.assert_close(corners2, ref["corners2"])
    points, valid = box_intersection(ref["corners1"], ref["corners2"])
    assert torch.equal(valid, ref["valid"]) and ref["valid"].any()
    torch.testing.assert_close(points, ref["points"])
    c12, c21 = box_in_box(ref["corners1"], ref["corners2"])
    assert torch.equal(c12, ref["c12"]) and torch.equal(c21, ref["c21"])
    vertices, mask = build_vertices(ref["corners1"], ref["corners2"], c12, c21, points, valid)
    torch.testing.assert_close(vertices, ref["vertices"])
    assert torch.equal(mask, ref["mask"])
    area, polygon = calculate_area(ref["idx"], ref["vertices"])
    torch.testing.assert_close(area, ref["area"])
    torch.testing.assert_close(polygon, ref["polygon"])
