"""mmcv.ops.correlation against loops that follow mmcv's CUDA kernels (it has no CPU kernel)."""

import itertools

import pytest
import torch
from torch.autograd import gradcheck

from mmpar.ops import Correlation
from mmpar.ops.correlation import CorrelationFunction

# (kernel_size, max_displacement, stride, padding, dilation, dilation_patch)
SETTINGS = [
    (1, 1, 1, 0, 1, 1),  # mmcv's defaults
    (3, 2, 2, 1, 2, 2),
    (2, 1, 1, 2, 1, 3),
    (3, 1, 3, 0, 1, 1),
]


def _in(i, j, h, w):
    return 0 <= i < h and 0 <= j < w


def _forward_reference(a, b, k, md, s, p, d, dp):
    """correlation_forward_cuda_kernel's loops: one output cell at a time."""
    n_, _, h, w = a.shape
    patch = 2 * md + 1
    out_h = int((h + 2 * p - ((k - 1) * d + 1)) / s + 1)
    out_w = int((w + 2 * p - ((k - 1) * d + 1)) / s + 1)
    out = torch.zeros(n_, patch, patch, out_h, out_w, dtype=a.dtype)
    radius = dp * (patch - 1) // 2
    for n, ph, pw, y, x in itertools.product(*map(range, out.shape)):
        total = 0.0
        for i, j in itertools.product(range(k), range(k)):
            i1, j1 = -p + y * s + i * d, -p + x * s + j * d
            i2, j2 = i1 + ph * dp - radius, j1 + pw * dp - radius
            if _in(i1, i2, h, h) and _in(j1, j2, w, w):
                total += float((a[n, :, i1, j1] * b[n, :, i2, j2]).sum())
        out[n, ph, pw, y, x] = total
    return out


def _backward_reference(grad, a, b, k, md, s, p, d, dp):
    """correlation_backward_cuda_kernel_input1 / _input2's loops, per input pixel."""
    n_, _, h, w = a.shape
    patch = 2 * md + 1
    radius = (patch - 1) // 2
    out_h, out_w = grad.shape[-2:]
    ga, gb = torch.zeros_like(a), torch.zeros_like(b)

    def summed(n, ph, pw, y, x):  # grad summed over the output cells whose window holds (y, x)
        total = 0.0
        for i, j in itertools.product(range(k), range(k)):
            oy, ox = y + p - i * d, x + p - j * d
            if oy % s == 0 and ox % s == 0 and _in(oy // s, ox // s, out_h, out_w):
                total += float(grad[n, ph, pw, oy // s, ox // s])
        return total

    for n, y, x, ph, pw in itertools.product(range(n_), range(h), range(w), *[range(patch)] * 2):
        y2, x2 = y + dp * (ph - radius), x + dp * (pw - radius)
        if _in(y2, x2, h, w):
            ga[n, :, y, x] += b[n, :, y2, x2] * summed(n, ph, pw, y, x)
        y1, x1 = y - dp * (ph - radius), x - dp * (pw - radius)
        if _in(y1, x1, h, w):
            gb[n, :, y, x] += a[n, :, y1, x1] * summed(n, ph, pw, y1, x1)
    return ga, gb


@pytest.mark.parametrize("setting", SETTINGS)
def test_correlation_forward_and_backward_match_mmcv_kernels(setting):
    gen = torch.Generator().manual_seed(sum(setting))
    a = torch.randn(2, 3, 7, 8, generator=gen, requires_grad=True)
    b = torch.randn(2, 3, 7, 8, generator=gen, requires_grad=True)
    out = Correlation(*setting)(a, b)
    expected = _forward_reference(a.detach(), b.detach(), *setting)
    torch.testing.assert_close(out, expected)
    grad = torch.randn(out.shape, generator=gen)
    ga, gb = torch.autograd.grad(out, (a, b), grad)
    ra, rb = _backward_reference(grad, a.detach(), b.detach(), *setting)
    torch.testing.assert_close(ga, ra)
    torch.testing.assert_close(gb, rb)


def test_correlation_function_gradcheck_shape_meta_and_repr():
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(1, 2, 4, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    b = torch.randn(1, 2, 4, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    # mmcv's function defaults (padding=1 there, 0 in the module).
    assert gradcheck(lambda x, y: CorrelationFunction.apply(x, y, 2, 1, 2, 1, 1, 2), (a, b))
    assert CorrelationFunction.apply(a, b).shape == (1, 3, 3, 6, 5)
    layer = Correlation(kernel_size=3, max_displacement=2, padding=1, dilation_patch=2)
    meta = layer(torch.empty(2, 8, 16, 12, device="meta"), torch.empty(2, 8, 16, 12, device="meta"))
    assert meta.shape == (2, 5, 5, 16, 12)
    assert repr(layer) == (
        "Correlation(kernel_size=3, max_displacement=2, stride=1, padding=1, dilation=1, "
        "dilation_patch=2)"
    )


def test_correlation_refuses_mismatched_inputs():
    with pytest.raises(ValueError, match=r"Correlation: input1 and input2 must be \(N, C, H, W\)"):
        Correlation()(torch.zeros(1, 2, 4, 4), torch.zeros(1, 2, 4, 5))
