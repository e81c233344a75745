"""The rotated-box ops against mmcv-full 1.7.2's compiled CPU kernels (stored outputs).

The data is made by scripts/mmcv_reference/rotated.py with a real mmcv-full build; see there
to regenerate it.
"""

import pytest
import torch
from helpers.mmcv_reference import load_reference

from mmpar.ops import (
    active_rotated_filter,
    box_iou_quadri,
    box_iou_rotated,
    nms_quadri,
    nms_rotated,
    roi_align_rotated,
    rotated_feature_align,
)

FAMILY = "rotated"


def case(name):
    return load_reference(FAMILY, name)


def test_box_iou_rotated_equals_mmcv_full():
    ref = case("box_iou_rotated")
    for mode in ("iou", "iof"):
        for clockwise in (True, False):
            got = box_iou_rotated(ref["boxes1"], ref["boxes2"], mode, False, clockwise)
            expected = ref[f"{mode}_{'cw' if clockwise else 'ccw'}"]
            torch.testing.assert_close(got, expected, rtol=0, atol=2e-5)
    got = box_iou_rotated(ref["boxes1"][:30], ref["boxes2"], aligned=True)
    torch.testing.assert_close(got, ref["aligned"], rtol=0, atol=2e-5)


def test_box_iou_quadri_equals_mmcv_full_on_rectangles():
    ref = case("box_iou_quadri")
    torch.testing.assert_close(
        box_iou_quadri(ref["boxes1"], ref["boxes2"]), ref["iou"], rtol=0, atol=2e-5
    )
    torch.testing.assert_close(
        box_iou_quadri(ref["boxes1"], ref["boxes2"], "iof"), ref["iof"], rtol=0, atol=2e-5
    )
    got = box_iou_quadri(ref["boxes1"][:25], ref["boxes2"], aligned=True)
    torch.testing.assert_close(got, ref["aligned"], rtol=0, atol=2e-5)


@pytest.mark.parametrize("threshold", [0.1, 0.3, 0.6])
def test_nms_rotated_equals_mmcv_full(threshold):
    ref = case("nms_rotated")
    dets, keep = nms_rotated(ref["boxes"], ref["scores"], threshold)
    assert torch.equal(keep, ref[f"keep_{threshold}"])
    torch.testing.assert_close(dets, ref[f"dets_{threshold}"])


def test_nms_quadri_equals_mmcv_full():
    ref = case("nms_quadri")
    dets, keep = nms_quadri(ref["boxes"], ref["scores"], 0.3)
    assert torch.equal(keep, ref["keep"])
    torch.testing.assert_close(dets, ref["dets"])


@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("clockwise", [True, False])
@pytest.mark.parametrize("sampling_ratio", [0, 2])
def test_roi_align_rotated_equals_mmcv_full(aligned, clockwise, sampling_ratio):
    ref = case("roi_align_rotated")
    key = f"{int(aligned)}{int(clockwise)}{sampling_ratio}"
    features = ref["features"].clone().requires_grad_(True)
    out = roi_align_rotated(features, ref["rois"], (3, 2), 0.5, sampling_ratio, aligned, clockwise)
    torch.testing.assert_close(out, ref[f"out_{key}"])
    out.backward(ref[f"grad_out_{key}"])
    torch.testing.assert_close(features.grad, ref[f"grad_{key}"])


@pytest.mark.parametrize("points", [1, 5])
def test_rotated_feature_align_equals_mmcv_full(points):
    ref = case("rotated_feature_align")
    features = ref["features"].clone().requires_grad_(True)
    out = rotated_feature_align(features, ref["boxes"], 1 / 8, points)
    torch.testing.assert_close(out, ref[f"out_{points}"])
    out.backward(ref[f"grad_out_{points}"])
    torch.testing.assert_close(features.grad, ref[f"grad_{points}"])


def test_active_rotated_filter_equals_mmcv_full():
    ref = case("active_rotated_filter")
    weights = ref["input"].clone().requires_grad_(True)
    out = active_rotated_filter(weights, ref["indices"])
    torch.testing.assert_close(out, ref["out"], rtol=0, atol=0)
    out.backward(ref["grad_out"])
    torch.testing.assert_close(weights.grad, ref["grad"])
