"""mmcv.ops.prroi_pool against loops that follow mmcv's CUDA kernels (it has no CPU kernel)."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.autograd import gradcheck

from mmpar.ops import PrRoIPool, prroi_pool
from mmpar.ops.prroi_pool import TORCH_VERSION, PrRoIPoolFunction

# Inside, across the border, inverted (zero area), past the far corner, sub-pixel.
ROIS = [
    [0, 1.3, 2.1, 15.6, 12.2],
    [1, -3.0, -2.0, 6.0, 5.0],
    [1, 4.0, 4.0, 3.0, 2.0],
    [0, 0.0, 0.0, 19.9, 17.9],
    [1, 10.0, 10.0, 10.5, 10.2],
    [0, 4.0, 4.0, 6.0, 6.0],
]


def _get(data, h, w):
    height, width = data.shape[-2:]
    return data[:, h, w] if 0 <= h < height and 0 <= w < width else 0 * data[:, 0, 0]


def _interpolate(data, h, w):
    """PrRoIPoolingInterpolation: the bilinear interpolant, zero beyond the map."""
    total = 0.0
    for dh in (0, 1):
        for dw in (0, 1):
            h1, w1 = math.floor(h) + dh, math.floor(w) + dw
            total = total + _get(data, h1, w1) * (1 - abs(h - h1)) * (1 - abs(w - w1))
    return total


def _cell(data, s_h, s_w, y0, x0, y1, x1):
    """PrRoIPoolingMatCalculation: the integral over [y0, y1] x [x0, x1] of one unit cell."""

    def part(lo, hi):
        return (hi - 0.5 * hi * hi) - (lo - 0.5 * lo * lo)

    e_h, e_w = s_h + 1, s_w + 1
    return (
        _get(data, s_h, s_w) * part(x0 - s_w, x1 - s_w) * part(y0 - s_h, y1 - s_h)
        + _get(data, s_h, e_w) * part(e_w - x1, e_w - x0) * part(y0 - s_h, y1 - s_h)
        + _get(data, e_h, s_w) * part(x0 - s_w, x1 - s_w) * part(e_h - y1, e_h - y0)
        + _get(data, e_h, e_w) * part(e_w - x1, e_w - x0) * part(e_h - y1, e_h - y0)
    )


def _line(data, lo, hi, fixed, along_y):
    """PrRoIPoolingSingleCoorIntegral summed over unit steps: a bin edge's line integral."""
    total = 0.0
    for k in range(math.floor(lo), math.ceil(hi)):
        s, t = max(lo, k) - k, min(hi, k + 1) - k
        if along_y:
            c1, c2 = _interpolate(data, k, fixed), _interpolate(data, k + 1, fixed)
        else:
            c1, c2 = _interpolate(data, fixed, k), _interpolate(data, fixed, k + 1)
        total = total + 0.5 * (t * t - s * s) * (c2 - c1) + (t - s) * c1
    return total


def _reference(feat, rois, size, scale, grad):
    """prroi_pool_forward / _backward / _coor_backward_cuda_kernel's loops."""
    pooled_h, pooled_w = size
    out = torch.zeros(len(rois), feat.size(1), pooled_h, pooled_w, dtype=feat.dtype)
    g_rois = torch.zeros(len(rois), 5, dtype=feat.dtype)
    for n, (b, rx1, ry1, rx2, ry2) in enumerate(rois):
        data = feat[int(b)]
        rx1, ry1, rx2, ry2 = rx1 * scale, ry1 * scale, rx2 * scale, ry2 * scale
        bin_h, bin_w = max(ry2 - ry1, 0) / pooled_h, max(rx2 - rx1, 0) / pooled_w
        area = max(bin_h * bin_w, 0.0)
        for ph in range(pooled_h):
            for pw in range(pooled_w):
                x1, y1 = rx1 + bin_w * pw, ry1 + bin_h * ph
                x2, y2 = x1 + bin_w, y1 + bin_h
                if area == 0:
                    continue
                total = 0.0
                for bx in range(math.floor(x1), math.ceil(x2)):
                    for by in range(math.floor(y1), math.ceil(y2)):
                        lo_y, lo_x = max(y1, by), max(x1, bx)
                        hi_y, hi_x = min(y2, by + 1), min(x2, bx + 1)
                        total = total + _cell(data, by, bx, lo_y, lo_x, hi_y, hi_x)
                mean = total / area
                out[n, :, ph, pw] = mean
                g = grad[n, :, ph, pw]
                d_x1 = (-_line(data, y1, y2, x1, True) + (y2 - y1) * mean) / area * scale
                d_x2 = (_line(data, y1, y2, x2, True) - (y2 - y1) * mean) / area * scale
                d_y1 = (-_line(data, x1, x2, y1, False) + (x2 - x1) * mean) / area * scale
                d_y2 = (_line(data, x1, x2, y2, False) - (x2 - x1) * mean) / area * scale
                # A bin's edges move with the RoI corners by these fractions.
                fx1, fx2 = pw / pooled_w, (pw + 1) / pooled_w
                fy1, fy2 = ph / pooled_h, (ph + 1) / pooled_h
                terms = [
                    d_x1 * (1 - fx1) + d_x2 * (1 - fx2),
                    d_y1 * (1 - fy1) + d_y2 * (1 - fy2),
                    d_x2 * fx2 + d_x1 * fx1,
                    d_y2 * fy2 + d_y1 * fy1,
                ]
                for column, term in enumerate(terms, start=1):
                    g_rois[n, column] += float((term * g).sum().detach())
    return out, g_rois


@pytest.fixture(scope="module")
def case():
    """One pooling of ROIS and its gradients, shared by the assertions below."""
    gen = torch.Generator().manual_seed(0)
    feat = torch.randn(2, 3, 8, 9, generator=gen, requires_grad=True)
    rois = torch.tensor(ROIS, requires_grad=True)
    out = prroi_pool(feat, rois, (3, 2), 0.5)
    grad = torch.randn(out.shape, generator=gen)
    g_feat, g_rois = torch.autograd.grad(out, (feat, rois), grad)
    feat64 = feat.detach().double().requires_grad_()
    expected, expected_g_rois = _reference(feat64, ROIS, (3, 2), 0.5, grad.double())
    (expected_g_feat,) = torch.autograd.grad(expected, feat64, grad.double())
    return out, g_feat, g_rois, expected, expected_g_feat, expected_g_rois


def test_forward_matches_mmcv_kernel_loops(case):
    out, expected = case[0], case[3]
    assert out.dtype == torch.float32 and out.shape == (6, 3, 3, 2)
    torch.testing.assert_close(out, expected.float())
    assert (out[2] == 0).all()  # the inverted RoI has no area: 0, as mmcv


def test_feature_gradient_matches_mmcv_kernel_loops(case):
    # The reference's feature gradient is its autograd: mmcv's backward is that adjoint.
    torch.testing.assert_close(case[1], case[4].float())


def test_roi_gradient_matches_mmcv_coor_kernel_loops(case):
    g_rois, expected = case[2], case[5]
    torch.testing.assert_close(g_rois, expected.float(), atol=2e-5, rtol=1e-4)
    assert (g_rois[:, 0] == 0).all() and (g_rois[2] == 0).all()


def test_gradcheck_in_features_and_rois():
    gen = torch.Generator().manual_seed(1)
    feat = torch.randn(1, 2, 5, 6, generator=gen, dtype=torch.float64, requires_grad=True)
    rois = torch.tensor(
        [[0, 0.7, 1.3, 9.1, 8.2], [0, -2.0, 3.0, 5.0, 12.5]], dtype=torch.float64
    ).requires_grad_()
    assert gradcheck(lambda f, r: PrRoIPoolFunction.apply(f, r, (2, 2), 0.6), (feat, rois))


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    box=st.tuples(*[st.floats(-2, 9, allow_nan=False)] * 4),
    value=st.floats(-3, 3, allow_nan=False),
)
def test_constant_map_gives_its_value_where_the_bin_is_inside(box, value):
    # The interpolant of a constant map is that constant on [0, H-1] x [0, W-1] and fades to
    # 0 within a pixel outside: a bin inside has that mean; any bin has at most |value|.
    x1, y1, x2, y2 = box
    rois = torch.tensor([[0.0, x1, y1, x2, y2]], dtype=torch.float64)
    feat = torch.full((1, 1, 8, 8), value, dtype=torch.float64)
    out = prroi_pool(feat, rois, (2, 2), 1.0)
    # A bin far thinner than the map's prefix sums resolve (e.g. 1e-54 high) integrates to 0,
    # as mmcv's float32 kernel, whose bin area underflows to 0 there, also gives 0.
    inside = 0 <= min(x1, y1) and max(x2, y2) <= 7 and x2 - x1 > 1e-3 and y2 - y1 > 1e-3
    if inside:
        torch.testing.assert_close(out, torch.full_like(out, value))
    assert (out.abs() <= abs(value) + 1e-12).all()


def test_layer_repr_and_errors():
    layer = PrRoIPool(7, spatial_scale=0.25)
    assert repr(layer) == "PrRoIPool(output_size=(7, 7), spatial_scale=0.25)"
    assert isinstance(TORCH_VERSION, str) and TORCH_VERSION == torch.__version__
    with pytest.raises(ValueError, match="prroi_pool: features and rois must be floating point"):
        prroi_pool(torch.zeros(1, 1, 4, 4), torch.zeros(1, 5, dtype=torch.long), 2)
    with pytest.raises(IndexError, match=r"prroi_pool: rois\[0\] has batch index 1"):
        prroi_pool(torch.zeros(1, 1, 4, 4), torch.tensor([[1.0, 0, 0, 2, 2]]), 2)
    with pytest.raises(ValueError, match=r"prroi_pool: rois\[0\] .* NaN or infinite"):
        prroi_pool(torch.zeros(1, 1, 4, 4), torch.tensor([[0.0, 0, math.nan, 2, 2]]), 2)
