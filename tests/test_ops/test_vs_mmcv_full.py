"""mmpar's ops against outputs stored from mmcv-full 1.7.2's compiled CPU kernels.

The data comes from scripts/mmcv_reference/{nms,roi,deform_conv,psa_mask}.py. NMS keeps the
same boxes in the same order (exact); soft-NMS scores within 1e-6 (one float32 rounding of
exp); RoIAlign, deformable convolution and PSAMask forward and gradients within 1e-5
(float32 sums in another order), the offset gradient of taps at -1 included.
"""

import pytest
import torch

from mmpar.ops import (
    PSAMask,
    batched_nms,
    deform_conv2d,
    modulated_deform_conv2d,
    nms,
    roi_align,
    soft_nms,
)
from tests.helpers.mmcv_reference import load_reference, reference_cases


@pytest.mark.parametrize("case", [c for c in reference_cases("nms") if c.startswith("nms_")])
def test_nms_keeps_what_mmcv_keeps(case):
    ref = load_reference("nms", case)
    offset = int(case[-1])
    _, keep = nms(ref["boxes"], ref["scores"], float(ref["thr"]), offset=offset)
    assert keep.tolist() == ref["keep"].tolist()


def test_nms_keeps_a_box_whose_iou_equals_the_threshold():
    # float32 IoU 0.6 == float32(0.6) is not above it: mmcv keeps both (the case).
    boxes = torch.tensor([[0, 0, 10, 10], [0, 0, 10, 6.0]])
    assert nms(boxes, torch.tensor([0.9, 0.8]), 0.6)[1].tolist() == [0, 1]


@pytest.mark.parametrize("method", ["linear", "gaussian", "naive"])
def test_soft_nms_matches_mmcv(method):
    ref = load_reference("nms", f"soft_nms_{method}")
    dets, keep = soft_nms(ref["boxes"], ref["scores"], 0.3, 0.5, 1e-3, method)
    assert keep.tolist() == ref["keep"].tolist()
    torch.testing.assert_close(dets, ref["dets"], rtol=1e-6, atol=1e-7)


def test_soft_nms_decays_one_float32_product_at_a_time():
    # Boxes decayed by several boxes taken in the same round: each score is multiplied by one
    # weight at a time in float32, as mmcv's kernel (a product accumulated in double, then
    # rounded once, differs in the last bit), so the scores are mmcv's exactly.
    ref = load_reference("nms", "soft_nms_linear_crowded")
    dets, keep = soft_nms(ref["boxes"], ref["scores"], 0.3, 0.5, 1e-3, "linear")
    assert keep.tolist() == ref["keep"].tolist()
    assert torch.equal(dets, ref["dets"])


def test_batched_nms_matches_mmcv():
    ref = load_reference("nms", "batched_nms")
    dets, keep = batched_nms(ref["boxes"], ref["scores"], ref["idxs"], dict(iou_threshold=0.5))
    assert keep.tolist() == ref["keep"].tolist()
    assert torch.equal(dets, ref["dets"])


@pytest.mark.parametrize("case", reference_cases("roi"))
def test_roi_align_matches_mmcv(case):
    ref = load_reference("roi", case)
    mode = "max" if "_max_" in case else "avg"
    feat = ref["feat"].clone().requires_grad_(True)
    out = roi_align(feat, ref["rois"], (3, 2), 0.5, int(ref["ratio"]), mode, bool(ref["aligned"]))
    out.backward(ref["grad_out"])
    torch.testing.assert_close(out, ref["out"], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(feat.grad, ref["grad_feat"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", reference_cases("deform_conv"))
def test_deform_convs_match_mmcv(case):
    ref = load_reference("deform_conv", case)
    x, offset, weight = (ref[k].clone().requires_grad_(True) for k in ("x", "offset", "weight"))
    out = deform_conv2d(x, offset, weight, 1, 1, 1, 2, 2)
    out.backward(ref["grad_out"])
    for got, key in ((out, "dcn_out"), (x.grad, "dcn_gx"), (offset.grad, "dcn_goff")):
        torch.testing.assert_close(got, ref[key], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(weight.grad, ref["dcn_gw"], rtol=1e-5, atol=1e-4)
    leaves = [ref[k].clone().requires_grad_(True) for k in ("x", "offset", "mask", "weight")]
    out = modulated_deform_conv2d(*leaves, None, 1, 1, 1, 2, 2)
    out.backward(ref["grad_out"])
    got = [out] + [leaf.grad for leaf in leaves]
    for value, key in zip(got, ("mdcn_out", "mdcn_gx", "mdcn_goff", "mdcn_gmask", "mdcn_gw")):
        torch.testing.assert_close(value, ref[key], rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("case", reference_cases("psa_mask"))
def test_psa_mask_matches_mmcv(case):
    ref = load_reference("psa_mask", case)
    psa_type, size = case.split("_")
    mask = tuple(int(v) for v in size.split("x"))
    x = ref["x"].clone().requires_grad_(True)
    out = PSAMask(psa_type, mask)(x)
    out.backward(ref["grad_out"])
    assert torch.equal(out, ref["out"])
    assert torch.equal(x.grad, ref["grad_x"])
