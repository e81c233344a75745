"""RoIAlign / RoIPool: mmcv's kernels' arithmetic as slow references, gradients, conventions."""

import math
import warnings

import pytest
import torch
from helpers.ops_reference import mmcv_bilinear

from mmpar.ops import RoIAlign, RoIPool, SimpleRoIAlign, roi_align, roi_pool


def _ref_roi_align(feat, rois, out_hw, scale, ratio, aligned, mode="avg"):
    ph, pw = out_hw
    out = feat.new_zeros(len(rois), feat.size(1), ph, pw)
    shift = 0.5 if aligned else 0.0
    for r, (b, x1, y1, x2, y2) in enumerate(rois.tolist()):
        sx, sy = x1 * scale - shift, y1 * scale - shift
        rw, rh = x2 * scale - shift - sx, y2 * scale - shift - sy
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = ratio if ratio > 0 else math.ceil(rh / ph)
        gw = ratio if ratio > 0 else math.ceil(rw / pw)
        count = max(gh * gw, 1)
        for i in range(ph):
            for j in range(pw):
                acc = 0
                # max mode: mmcv's running maximum starts at -10000.
                best = feat.new_full((feat.size(1),), -10000.0)
                for iy in range(gh):
                    y = sy + i * bh + (iy + 0.5) * bh / gh
                    for ix in range(gw):
                        x = sx + j * bw + (ix + 0.5) * bw / gw
                        value = mmcv_bilinear(feat[int(b)], y, x)
                        acc = acc + value
                        best = torch.maximum(best, value)
                out[r, :, i, j] = acc / count if mode == "avg" else best
    return out


def _inputs(dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    feat = torch.rand(2, 3, 9, 11, generator=g, dtype=dtype)
    rois = torch.tensor(
        [[0, 1.3, 2.2, 13.0, 15.1], [1, 0.0, 0.0, 21.7, 17.0], [1, 5.5, 4.0, 6.0, 4.2]],
        dtype=dtype,
    )
    return feat, rois


@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("ratio", [0, 2])
def test_roi_align_matches_mmcvs_arithmetic(aligned, ratio):
    feat, rois = _inputs()
    out = roi_align(feat, rois, (3, 2), 0.5, ratio, "avg", aligned)
    ref = _ref_roi_align(feat, rois, (3, 2), 0.5, ratio, aligned)
    assert out.shape == (3, 3, 3, 2)
    assert torch.allclose(out, ref, atol=1e-5)
    layer = RoIAlign((3, 2), 0.5, ratio, aligned=aligned)
    assert torch.equal(layer(feat, rois), out)
    assert torch.equal(
        RoIAlign((3, 2), 0.5, ratio, aligned=aligned, use_torchvision=True)(feat, rois), out
    )


def test_roi_align_gradients():
    feat, rois = _inputs(torch.float64)
    feat.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda f: roi_align(f, rois, 2, 0.5, 2), (feat,))


def test_roi_align_old_argument_names_and_max_mode():
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        layer = RoIAlign(out_size=4, sample_num=2)
    assert layer.output_size == (4, 4) and layer.sampling_ratio == 2
    assert "use_torchvision=False" in repr(layer)
    feat, rois = _inputs()
    with pytest.raises(AssertionError):
        roi_align(feat, rois, 2, pool_mode="median")


@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("ratio", [0, 2])
def test_roi_align_max_mode_matches_mmcvs_cpu_arithmetic(aligned, ratio):
    feat, rois = _inputs(torch.float64)
    # A box partly off the map (samples more than a pixel out are 0) and one in negatives.
    rois = torch.cat([rois, rois.new_tensor([[0, -8.0, -6.0, 6.0, 30.0]])])
    feat = feat - 0.5
    out = roi_align(feat, rois, (3, 2), 0.5, ratio, "max", aligned)
    ref = _ref_roi_align(feat, rois, (3, 2), 0.5, ratio, aligned, mode="max")
    assert torch.allclose(out, ref, atol=1e-12)
    assert torch.equal(RoIAlign((3, 2), 0.5, ratio, "max", aligned)(feat, rois), out)


def test_roi_align_max_mode_floor_and_gradient():
    feat, rois = _inputs(torch.float64)
    # Every sample below mmcv's starting maximum: the output is that -10000, with no gradient.
    low = (feat - 20000).requires_grad_(True)
    out = roi_align(low, rois[:1], 2, 0.5, 2, "max")
    assert torch.all(out == -10000)
    out.sum().backward()
    assert torch.all(low.grad == 0)
    small = feat[:1, :1, :5, :6].detach().clone().requires_grad_(True)
    box = rois.new_tensor([[0, 1.3, 2.2, 9.0, 8.1]])
    assert torch.autograd.gradcheck(lambda f: roi_align(f, box, 2, 0.5, 2, "max"), (small,))


@pytest.mark.parametrize(
    "op", [roi_align, roi_pool, RoIAlign(2), RoIPool(2), SimpleRoIAlign(2, 0.5)]
)
@pytest.mark.parametrize("index", [2, -1, float("nan")])
def test_roi_ops_reject_batch_indices_out_of_range(op, index):
    feat, rois = _inputs()
    rois[1, 0] = index
    call = op if isinstance(op, torch.nn.Module) else (lambda f, r: op(f, r, 2))
    with pytest.raises(IndexError, match=r"rois\[1\] has batch index .* 2 image"):
        call(feat, rois)
    with pytest.raises(AssertionError, match=r"shape \(K, 5\)"):
        call(feat, rois[:, :4])


def _ref_roi_pool(feat, rois, out_hw, scale):
    # mmcv's CUDA kernel: bins from the unrounded corners, (x2 + 1) inclusive, empty bins 0.
    ph, pw = out_hw
    h, w = feat.shape[-2:]
    out = feat.new_zeros(len(rois), feat.size(1), ph, pw)
    for r, (b, x1, y1, x2, y2) in enumerate(rois.tolist()):
        x1, y1, x2, y2 = x1 * scale, y1 * scale, (x2 + 1) * scale, (y2 + 1) * scale
        if x2 <= x1 or y2 <= y1:
            continue  # the kernel skips boxes with no extent
        bw, bh = (x2 - x1) / pw, (y2 - y1) / ph
        for i in range(ph):
            for j in range(pw):
                ys = min(max(math.floor(i * bh + y1), 0), h)
                ye = min(max(math.ceil((i + 1) * bh + y1), 0), h)
                xs = min(max(math.floor(j * bw + x1), 0), w)
                xe = min(max(math.ceil((j + 1) * bw + x1), 0), w)
                if ye > ys and xe > xs:
                    out[r, :, i, j] = feat[int(b), :, ys:ye, xs:xe].amax(dim=(-1, -2))
    return out


def test_roi_pool_matches_mmcv_for_grid_aligned_boxes():
    feat, _ = _inputs()
    # x1 * scale and (x2 + 1) * scale on the feature grid: mmcv's bins exactly.
    rois = torch.tensor([[0, 2.0, 2.0, 13.0, 15.0], [1, 0.0, 4.0, 19.0, 17.0], [0, 6, 6, 9, 7]])
    out = roi_pool(feat, rois, (2, 3), 0.5)
    assert torch.equal(out, _ref_roi_pool(feat, rois, (2, 3), 0.5))
    assert torch.equal(RoIPool((2, 3), 0.5)(feat, rois), out)
    assert repr(RoIPool(2, 0.25)) == "RoIPool(output_size=(2, 2), spatial_scale=0.25)"


def test_roi_pool_uses_mmcvs_unrounded_bins():
    # The case: mmcv [27, 30, 59, 62]; rounding the box to the grid gives 51, 54.
    x = torch.arange(64.0).reshape(1, 1, 8, 8)
    out = roi_pool(x, torch.tensor([[0, 1.2, 0, 5.6, 6.3]]), 2, 1.0)
    assert out.flatten().tolist() == [27, 30, 59, 62]
    feat, _ = _inputs()
    g = torch.Generator().manual_seed(3)
    corners = torch.rand(12, 4, generator=g) * 24 - 2
    rois = torch.cat(
        [
            torch.randint(0, 2, (12, 1), generator=g).float(),
            corners[:, :2],
            corners[:, :2] + corners[:, 2:],
        ],
        1,
    )
    assert torch.equal(roi_pool(feat, rois, (3, 2), 0.5), _ref_roi_pool(feat, rois, (3, 2), 0.5))


def test_roi_pool_inverted_box_gives_zero_and_no_gradient():
    feat, _ = _inputs(torch.float64)
    feat.requires_grad_(True)
    # x2 + 1 < x1: mmcv's kernel skips the box, leaving its zeros.
    out = roi_pool(feat, feat.new_tensor([[0, 8.0, 2.0, 3.0, 9.0]]), 2)
    assert torch.all(out == 0)
    out.sum().backward()
    assert torch.all(feat.grad == 0)


def test_roi_pool_gradients_reach_the_max():
    feat, _ = _inputs(torch.float64)
    feat.requires_grad_(True)
    rois = torch.tensor([[0, 2.0, 2.0, 13.0, 15.0]], dtype=torch.float64)
    roi_pool(feat, rois, 2, 0.5).sum().backward()
    # Each output routes its gradient to its one maximum (bins may share one).
    assert feat.grad.sum() == 2 * 2 * 3
    assert torch.equal(feat.grad, feat.grad.round()) and feat.grad.min() == 0
