"""DCN / DCNv2: mmcv's offset layout against a slow bilinear reference, gradients, state dicts."""

import pytest
import torch
import torch.nn.functional as F

from mmpar.cnn import CONV_LAYERS, build_conv_layer
from mmpar.ops import (
    DeformConv2d,
    DeformConv2dPack,
    ModulatedDeformConv2d,
    ModulatedDeformConv2dPack,
    deform_conv2d,
    modulated_deform_conv2d,
)


def _sample(img, y, x):
    # Bilinear with zeros outside the image (mmcv's deformable im2col rule).
    h, w = img.shape[-2:]
    if y <= -1 or y >= h or x <= -1 or x >= w:
        return img.new_zeros(img.shape[:-2])
    y0, x0 = int(torch.floor(torch.tensor(y))), int(torch.floor(torch.tensor(x)))
    acc = img.new_zeros(img.shape[:-2])
    for yy, wy in ((y0, y0 + 1 - y), (y0 + 1, y - y0)):
        for xx, wx in ((x0, x0 + 1 - x), (x0 + 1, x - x0)):
            if 0 <= yy < h and 0 <= xx < w:
                acc = acc + wy * wx * img[..., yy, xx]
    return acc


def _ref(x, offset, weight, mask=None, stride=1, pad=1, dil=1, groups=1, dgroups=1):
    n, cin, _, _ = x.shape
    cout, cin_g, kh, kw = weight.shape
    oh, ow = offset.shape[-2:]
    out = x.new_zeros(n, cout, oh, ow)
    ch_per_dg = cin // dgroups
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                for ky in range(kh):
                    for kx in range(kw):
                        k = ky * kw + kx
                        cols = []
                        for c in range(cin):
                            dg = c // ch_per_dg
                            # Per deformable group: [y0, x0, y1, x1, ...] over the taps.
                            dy = float(offset[b, dg * 2 * kh * kw + 2 * k, i, j])
                            dx = float(offset[b, dg * 2 * kh * kw + 2 * k + 1, i, j])
                            y = i * stride - pad + ky * dil + dy
                            xx = j * stride - pad + kx * dil + dx
                            v = _sample(x[b, c], y, xx)
                            if mask is not None:
                                v = v * mask[b, dg * kh * kw + k, i, j]
                            cols.append(v)
                        cols = torch.stack(cols)
                        for o in range(cout):
                            g = o // (cout // groups)
                            w = weight[o, :, ky, kx]
                            out[b, o, i, j] += (w * cols[g * cin_g : (g + 1) * cin_g]).sum()
    return out


def _data(dtype=torch.float32, cin=4, cout=2, groups=2, dgroups=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(1, cin, 4, 5, generator=g, dtype=dtype)
    offset = torch.randn(1, dgroups * 18, 4, 5, generator=g, dtype=dtype) * 1.3
    mask = torch.rand(1, dgroups * 9, 4, 5, generator=g, dtype=dtype)
    weight = torch.randn(cout, cin // groups, 3, 3, generator=g, dtype=dtype)
    return x, offset, mask, weight


def test_deform_conv2d_matches_the_reference_with_groups_and_deform_groups():
    x, offset, _, weight = _data()
    out = deform_conv2d(x, offset, weight, 1, 1, 1, groups=2, deform_groups=2)
    ref = _ref(x, offset, weight, groups=2, dgroups=2)
    assert torch.allclose(out, ref, atol=1e-5)


def test_zero_offsets_give_a_plain_convolution():
    x, offset, _, weight = _data(groups=1, dgroups=1)
    out = deform_conv2d(x, torch.zeros(1, 18, 2, 3), weight, 2, 1, 1)
    assert torch.allclose(out, F.conv2d(x, weight, stride=2, padding=1), atol=1e-5)


def test_modulated_deform_conv2d_matches_the_reference():
    x, offset, mask, weight = _data()
    bias = torch.tensor([0.5, -1.0])
    out = modulated_deform_conv2d(x, offset, mask, weight, bias, 1, 1, 1, 2, 2)
    ref = _ref(x, offset, weight, mask, groups=2, dgroups=2) + bias.view(1, 2, 1, 1)
    assert torch.allclose(out, ref, atol=1e-5)


def test_gradients_of_both_ops():
    g = torch.Generator().manual_seed(1)
    x = torch.rand(1, 1, 3, 3, generator=g, dtype=torch.float64)
    # Offsets away from whole pixels: bilinear sampling has kinks there.
    offset = torch.rand(1, 8, 2, 2, generator=g, dtype=torch.float64) * 0.6 + 0.2
    mask = torch.rand(1, 4, 2, 2, generator=g, dtype=torch.float64)
    weight = torch.randn(1, 1, 2, 2, generator=g, dtype=torch.float64)
    args = [t.clone().requires_grad_(True) for t in (x, offset, weight)]
    assert torch.autograd.gradcheck(deform_conv2d, args)
    args = [t.clone().requires_grad_(True) for t in (x, offset, mask, weight)]
    assert torch.autograd.gradcheck(modulated_deform_conv2d, args)


def test_group_arguments_that_disagree_with_the_shapes_fail():
    x, offset, _, weight = _data()
    with pytest.raises(ValueError, match="deform_groups=1"):
        deform_conv2d(x, offset, weight, 1, 1, 1, groups=2, deform_groups=1)
    with pytest.raises(ValueError, match="groups=1"):
        deform_conv2d(x, offset, weight, 1, 1, 1, groups=1, deform_groups=2)


def test_deform_conv2d_layers_state_dict_init_and_registry():
    layer = DeformConv2d(4, 2, 3, padding=1, groups=2, deform_groups=2)
    assert list(layer.state_dict()) == ["weight"] and layer.weight.shape == (2, 2, 3, 3)
    x, offset, _, _ = _data()
    assert torch.allclose(
        layer(x, offset), _ref(x, offset, layer.weight.detach(), groups=2, dgroups=2), atol=1e-5
    )
    with pytest.raises(AssertionError, match="bias"):
        DeformConv2d(4, 2, 3, bias=True)

    pack = DeformConv2dPack(4, 2, 3, padding=1, deform_groups=2)
    assert sorted(pack.state_dict()) == ["conv_offset.bias", "conv_offset.weight", "weight"]
    assert pack.conv_offset.out_channels == 2 * 2 * 9
    assert not pack.conv_offset.weight.any() and not pack.conv_offset.bias.any()
    assert torch.allclose(pack(x), F.conv2d(x, pack.weight, padding=1), atol=1e-5)
    assert CONV_LAYERS.get("DCN") is DeformConv2dPack
    assert isinstance(
        build_conv_layer(dict(type="DCN", deform_groups=1), 4, 2, 3), DeformConv2dPack
    )


def test_inputs_smaller_than_the_kernel_are_padded_as_mmcv_does():
    layer = DeformConv2d(1, 1, 3, padding=1)
    x = torch.rand(1, 1, 2, 2)
    # mmcv pads input and offsets at the bottom/right to the kernel size, then crops.
    out = layer(x, torch.zeros(1, 18, 2, 2))
    expected = F.conv2d(F.pad(x, (0, 1, 0, 1)), layer.weight, padding=1)[..., :2, :2]
    assert torch.allclose(out, expected, atol=1e-6)


def test_modulated_pack_splits_conv_offset_as_mmcv():
    pack = ModulatedDeformConv2dPack(2, 3, 3, padding=1)
    assert sorted(pack.state_dict()) == [
        "bias", "conv_offset.bias", "conv_offset.weight", "weight",
    ]  # fmt: skip
    assert pack.conv_offset.out_channels == 27 and not pack.conv_offset.weight.any()
    x = torch.rand(1, 2, 4, 4)
    # Fresh: a plain convolution with every tap at mask 0.5.
    assert torch.allclose(pack(x), F.conv2d(x, pack.weight * 0.5, pack.bias, padding=1), atol=1e-5)
    with torch.no_grad():
        # mmcv: o1, o2, m = chunk(out, 3); offset = cat(o1, o2); mask = sigmoid(m).
        # Channel 0 is then y of tap 0, channel 9 (start of o2) x of tap 4, channel 18 tap 0's mask.
        pack.conv_offset.bias[0] = 0.7
        pack.conv_offset.bias[9] = -0.4
        pack.conv_offset.bias[18] = 2.0
    offset = torch.zeros(1, 18, 4, 4)
    offset[:, 0], offset[:, 9] = 0.7, -0.4
    mask = torch.full((1, 9, 4, 4), 0.5)
    mask[:, 0] = torch.sigmoid(torch.tensor(2.0))
    ref = _ref(x, offset, pack.weight.detach(), mask) + pack.bias.detach().view(1, 3, 1, 1)
    assert torch.allclose(pack(x), ref, atol=1e-5)
    assert CONV_LAYERS.get("DCNv2") is ModulatedDeformConv2dPack
    assert ModulatedDeformConv2d(2, 3, 3, bias=False).bias is None
