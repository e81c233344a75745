"""mmcv.ops.deform_roi_pool against loops that follow mmcv's CUDA kernel (it has no CPU kernel)."""

import math

import pytest
import torch
from helpers.ops_reference import mmcv_bilinear, mmcv_bilinear_taps
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.autograd import gradcheck

from mmpar.ops import (
    DeformRoIPool,
    DeformRoIPoolPack,
    ModulatedDeformRoIPoolPack,
    deform_roi_pool,
    roi_align,
)
from mmpar.ops.deform_roi_pool import DeformRoIPoolFunction

# Boxes inside, across the border, inverted (no samples), past the far corner, zero-sized.
ROIS = [
    [0, 1.3, 2.1, 15.6, 12.2],
    [1, -3.0, -2.0, 6.0, 5.0],
    [1, 4.0, 4.0, 3.0, 2.0],
    [0, 0.0, 0.0, 19.9, 17.9],
    [1, 10.0, 10.0, 10.0, 10.0],
]


def _reference(inp, rois, offset, size, scale, ratio, gamma, grad):
    """deform_roi_pool_{forward,backward}_cuda_kernel's loops: output, input and offset grads."""
    count, channels = rois.size(0), inp.size(1)
    pooled_h, pooled_w = size
    height, width = inp.shape[-2:]
    out = torch.zeros(count, channels, pooled_h, pooled_w, dtype=inp.dtype)
    g_in, g_off = torch.zeros_like(inp), torch.zeros(count, 2, pooled_h, pooled_w, dtype=inp.dtype)
    for n in range(count):
        f = inp[int(rois[n, 0])]
        g_f = g_in[int(rois[n, 0])]
        start_w, start_h = float(rois[n, 1]) * scale - 0.5, float(rois[n, 2]) * scale - 0.5
        roi_w = (float(rois[n, 3]) * scale - 0.5) - start_w
        roi_h = (float(rois[n, 4]) * scale - 0.5) - start_h
        grid_h = ratio if ratio > 0 else math.ceil(roi_h / pooled_h)
        grid_w = ratio if ratio > 0 else math.ceil(roi_w / pooled_w)
        for ph in range(pooled_h):
            for pw in range(pooled_w):
                x0, y0 = start_w, start_h
                if offset is not None:
                    x0 += gamma * roi_w * float(offset[n, 0, ph, pw])
                    y0 += gamma * roi_h * float(offset[n, 1, ph, pw])
                total = 0.0
                g = grad[n, :, ph, pw] / max(grid_h * grid_w, 1)
                for iy in range(max(grid_h, 0)):
                    y = y0 + ph * roi_h / pooled_h + (iy + 0.5) * roi_h / pooled_h / grid_h
                    for ix in range(max(grid_w, 0)):
                        x = x0 + pw * roi_w / pooled_w + (ix + 0.5) * roi_w / pooled_w / grid_w
                        total = total + mmcv_bilinear(f, y, x)
                        taps = mmcv_bilinear_taps(height, width, y, x)
                        if taps is None:
                            continue
                        yl, yh, xl, xh, ly, lx = taps
                        g_f[:, yl, xl] += g * (1 - ly) * (1 - lx)
                        g_f[:, yl, xh] += g * (1 - ly) * lx
                        g_f[:, yh, xl] += g * ly * (1 - lx)
                        g_f[:, yh, xh] += g * ly * lx
                        # mmcv's offset gradient, with the unclamped y and x.
                        v00, v10, v01, v11 = f[:, yl, xl], f[:, yl, xh], f[:, yh, xl], f[:, yh, xh]
                        ogx = v11 * (y - yl) + v10 * (yh - y) + v01 * (yl - y) + v00 * (y - yh)
                        ogy = v11 * (x - xl) + v01 * (xh - x) + v10 * (xl - x) + v00 * (x - xh)
                        g_off[n, 0, ph, pw] += gamma * roi_w * float((g * ogx).sum())
                        g_off[n, 1, ph, pw] += gamma * roi_h * float((g * ogy).sum())
                out[n, :, ph, pw] = total / max(grid_h * grid_w, 1)
    return out, g_in, g_off


@pytest.mark.parametrize("ratio", [0, 2])
@pytest.mark.parametrize("with_offset", [False, True])
def test_deform_roi_pool_matches_mmcv_kernels(ratio, with_offset):
    gen = torch.Generator().manual_seed(ratio + 2 * with_offset)
    inp = torch.randn(2, 3, 9, 10, generator=gen, requires_grad=True)
    rois = torch.tensor(ROIS)
    offset = None
    if with_offset:
        offset = (torch.randn(5, 2, 3, 2, generator=gen) * 2).requires_grad_()
    out = deform_roi_pool(inp, rois, offset, (3, 2), 0.5, ratio, 0.3)
    grad = torch.randn(out.shape, generator=gen)
    expected, g_in, g_off = _reference(
        inp.detach(), rois, None if offset is None else offset.detach(), (3, 2), 0.5, ratio, 0.3,
        grad,
    )  # fmt: skip
    torch.testing.assert_close(out, expected)
    grads = torch.autograd.grad(out, [inp] + ([offset] if with_offset else []), grad)
    torch.testing.assert_close(grads[0], g_in)
    if with_offset:
        torch.testing.assert_close(grads[1], g_off)


def test_offset_gradient_is_mmcvs_not_the_derivative_at_the_border():
    # A sample between -1 and 0 is clamped to row 0 (the forward is flat there), but mmcv's
    # offset gradient weighs the taps by the unclamped coordinate: kept as mmcv's.
    inp = torch.arange(16.0).view(1, 1, 4, 4)
    rois = torch.tensor([[0.0, 0.0, -0.2, 2.0, 0.8]])  # one 1 x 1 bin sampled at y = -0.2
    offset = torch.zeros(1, 2, 1, 1, requires_grad=True)
    out = deform_roi_pool(inp, rois, offset, 1, 1.0, 1, 0.5)
    (grad,) = torch.autograd.grad(out.sum(), offset)
    expected = _reference(inp, rois, offset.detach(), (1, 1), 1.0, 1, 0.5, torch.ones(1, 1, 1, 1))
    torch.testing.assert_close(out, expected[0])
    torch.testing.assert_close(grad, expected[2])
    assert grad[0, 1, 0, 0] != 0  # the true derivative in y is 0 here


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    box=st.tuples(*[st.floats(-3, 14, allow_nan=False)] * 4),
    ratio=st.integers(0, 3),
    scale=st.sampled_from([0.5, 1.0]),
)
def test_without_offsets_it_is_aligned_roi_align(box, ratio, scale):
    x1, y1, x2, y2 = box
    rois = torch.tensor([[0.0, min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)]])
    feat = torch.linspace(-1, 1, 2 * 7 * 8).view(1, 2, 7, 8)
    ours = DeformRoIPool((2, 3), scale, ratio)(feat, rois)
    torch.testing.assert_close(ours, roi_align(feat, rois, (2, 3), scale, ratio, "avg", True))


def test_gradcheck_packs_and_errors():
    gen = torch.Generator().manual_seed(0)
    inp = torch.randn(1, 2, 5, 6, generator=gen, dtype=torch.float64, requires_grad=True)
    rois = torch.tensor([[0.0, 0.5, 1.2, 4.3, 3.9], [0.0, 2.0, 0.0, 6.0, 5.0]], dtype=torch.float64)
    assert gradcheck(lambda x: DeformRoIPoolFunction.apply(x, rois, None, 2, 1.0, 2), (inp,))
    # mmcv passes an empty offset for "none": the same result, no offset gradient.
    empty = torch.zeros(0, dtype=torch.float64)
    torch.testing.assert_close(
        deform_roi_pool(inp, rois, empty, (2, 2)), deform_roi_pool(inp, rois, None, (2, 2))
    )
    for pack in (DeformRoIPoolPack, ModulatedDeformRoIPoolPack):
        layer = pack((2, 2), 2, deform_fc_channels=8).double()
        out = layer(inp, rois)
        assert out.shape == (2, 2, 2, 2)
        out.sum().backward()  # offsets start at zero: the packs first equal plain pooling
        plain = DeformRoIPool((2, 2))(inp, rois)
        scale = 0.5 if pack is ModulatedDeformRoIPoolPack else 1.0  # sigmoid(0) mask
        torch.testing.assert_close(out, plain * scale)
    assert set(ModulatedDeformRoIPoolPack((7, 7), 256).state_dict()) == {
        f"{head}.{i}.{p}" for head, idx in (("offset_fc", (0, 2, 4)), ("mask_fc", (0, 2)))
        for i in idx for p in ("weight", "bias")
    }  # fmt: skip
    with pytest.raises(IndexError, match=r"deform_roi_pool: rois\[0\] has batch index 3"):
        deform_roi_pool(inp, torch.tensor([[3.0, 0, 0, 1, 1]]), None, 2)
    with pytest.raises(ValueError, match=r"deform_roi_pool: offset must be \(K, 2, 2, 2\)"):
        deform_roi_pool(inp, rois, torch.zeros(2, 2, 3, 3), 2)
    with pytest.raises(ValueError, match=r"deform_roi_pool: rois\[0\] .* NaN or infinite"):
        deform_roi_pool(inp, torch.tensor([[0.0, 0, 0, math.inf, 1]]), None, 2)
    with pytest.raises(AssertionError):
        deform_roi_pool(inp, torch.zeros(1, 4), None, 2)
