"""fused_bias_leakyrelu and upfirdn2d (StyleGAN2's ops) against their definitions."""

import itertools

import pytest
import torch
import torch.nn.functional as F

from mmpar.ops import FusedBiasLeakyReLU, fused_bias_leakyrelu, upfirdn2d


def test_fused_bias_leakyrelu_is_bias_then_leaky_relu_then_scale():
    x = torch.randn(2, 3, 4, 5)
    bias = torch.tensor([0.5, -1.0, 2.0])
    out = fused_bias_leakyrelu(x, bias, 0.1, 3.0)
    assert torch.allclose(out, F.leaky_relu(x + bias.view(1, 3, 1, 1), 0.1) * 3.0)
    assert torch.allclose(
        fused_bias_leakyrelu(x[..., 0, 0], None), F.leaky_relu(x[..., 0, 0], 0.2) * 2**0.5
    )
    layer = FusedBiasLeakyReLU(3)
    assert list(layer.state_dict()) == ["bias"] and not layer.bias.any()
    x64 = torch.randn(2, 3, 3, dtype=torch.float64, requires_grad=True)
    b64 = torch.randn(3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(fused_bias_leakyrelu, (x64, b64))
    with pytest.raises(AssertionError):
        fused_bias_leakyrelu(x, bias, scale=0)


def _ref_upfirdn(img, kernel, up, down, pad):
    # The definition: u = zero-upsampled input placed at (y0, x0) in a padded plane;
    # out[oy, ox] = sum_k u[oy * down + ky, ox * down + kx] * kernel[kh - 1 - ky, kw - 1 - kx].
    (ux, uy), (dx, dy), (x0, x1, y0, y1) = up, down, pad
    h, w = img.shape
    kh, kw = kernel.shape
    hh, ww = h * uy + y0 + y1, w * ux + x0 + x1

    def u(y, x):
        y, x = y - y0, x - x0
        if y < 0 or x < 0 or y % uy or x % ux or y // uy >= h or x // ux >= w:
            return 0.0
        return float(img[y // uy, x // ux])

    oh, ow = (hh - kh) // dy + 1, (ww - kw) // dx + 1
    out = torch.zeros(oh, ow, dtype=img.dtype)
    for oy, ox in itertools.product(range(oh), range(ow)):
        out[oy, ox] = sum(
            u(oy * dy + ky, ox * dx + kx) * float(kernel[kh - 1 - ky, kw - 1 - kx])
            for ky in range(kh)
            for kx in range(kw)
        )
    return out


@pytest.mark.parametrize(
    ("up", "down", "pad"),
    [(1, 1, (0, 0)), (2, 1, (1, 2)), (1, 2, (1, 1, 0, 1)), ((2, 1), (1, 2), (2, 1, -1, 1))],
)
def test_upfirdn2d_matches_its_definition(up, down, pad):
    g = torch.Generator().manual_seed(0)
    img = torch.randn(2, 2, 4, 5, generator=g, dtype=torch.float64)
    kernel = torch.randn(3, 2, generator=g, dtype=torch.float64)
    out = upfirdn2d(img, kernel, up, down, pad)
    as_pair = lambda v: (v, v) if isinstance(v, int) else v  # noqa: E731
    full_pad = pad if len(pad) == 4 else (pad[0], pad[1], pad[0], pad[1])
    ref = _ref_upfirdn(img[1, 0], kernel, as_pair(up), as_pair(down), full_pad)
    assert out.shape[:2] == (2, 2) and torch.allclose(out[1, 0], ref)


def test_upfirdn2d_native_spells_out_the_factors():
    from mmpar.ops.upfirdn2d import upfirdn2d_native

    img, kernel = torch.randn(1, 2, 4, 4), torch.randn(2, 3)
    expected = upfirdn2d(img, kernel, (2, 1), (1, 2), (1, 0, 2, -1))
    assert torch.equal(upfirdn2d_native(img, kernel, 2, 1, 1, 2, 1, 0, 2, -1), expected)


def test_upfirdn2d_gradients():
    img = torch.randn(1, 1, 3, 3, dtype=torch.float64, requires_grad=True)
    kernel = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, k: upfirdn2d(a, k, 2, 1, (1, 0)), (img, kernel))
