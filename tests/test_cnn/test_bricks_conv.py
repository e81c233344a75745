"""build_conv_layer, build_padding_layer, build_upsample_layer, build_plugin_layer and the
special convolutions (Conv2dAdaptivePadding, ConvWS2d, ConvAWS2d)."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from mmpar.cnn.bricks import (
    ContextBlock,
    Conv2dAdaptivePadding,
    ConvAWS2d,
    ConvWS2d,
    build_conv_layer,
    build_padding_layer,
    build_plugin_layer,
    build_upsample_layer,
    conv_ws_2d,
)
from mmpar.cnn.bricks.plugin import infer_abbr
from mmpar.cnn.bricks.upsample import PixelShufflePack
from mmpar.cnn.bricks.wrappers import Conv2d, ConvTranspose2d


def test_build_conv_layer():
    default = build_conv_layer(None, 2, 3, 3, stride=2)
    assert type(default) is nn.Conv2d and default.stride == (2, 2)
    assert type(build_conv_layer(dict(type="Conv"), 2, 3, 3)) is Conv2d
    assert type(build_conv_layer(dict(type="Conv1d"), 2, 3, 3)) is nn.Conv1d
    deconv = build_conv_layer(dict(type="deconv", output_padding=1), 2, 3, 3, stride=2)
    assert type(deconv) is ConvTranspose2d and deconv.output_padding == (1, 1)
    cfg = dict(type="Conv2d", bias=False)
    assert build_conv_layer(cfg, 2, 3, 1).bias is None
    assert cfg == dict(type="Conv2d", bias=False)
    with pytest.raises(TypeError):
        build_conv_layer("Conv2d", 2, 3, 3)
    with pytest.raises(KeyError):
        build_conv_layer(dict(bias=False), 2, 3, 3)
    with pytest.raises(KeyError):
        build_conv_layer(dict(type="FancyConv"), 2, 3, 3)


def test_build_padding_layer():
    x = torch.randn(1, 2, 4, 5)
    for name, mode in (("zero", "constant"), ("reflect", "reflect"), ("replicate", "replicate")):
        layer = build_padding_layer(dict(type=name), 2)
        assert torch.equal(layer(x), F.pad(x, (2, 2, 2, 2), mode=mode))
    assert build_padding_layer(dict(type="zero", padding=(1, 0, 2, 0)))(x).shape == (1, 2, 6, 6)
    with pytest.raises(TypeError):
        build_padding_layer("reflect", 1)
    with pytest.raises(KeyError):
        build_padding_layer(dict(), 1)
    with pytest.raises(KeyError):
        build_padding_layer(dict(type="mirror"), 1)


def test_build_upsample_layer():
    x = torch.randn(1, 2, 3, 4)
    nearest = build_upsample_layer(dict(type="nearest", scale_factor=2))
    assert isinstance(nearest, nn.Upsample) and nearest.mode == "nearest"
    assert torch.equal(nearest(x), F.interpolate(x, scale_factor=2, mode="nearest"))
    bilinear = build_upsample_layer(dict(type="bilinear", scale_factor=2, align_corners=False))
    assert bilinear.mode == "bilinear"
    assert torch.allclose(bilinear(x), F.interpolate(x, scale_factor=2, mode="bilinear"))
    deconv = build_upsample_layer(dict(type="deconv"), 2, 3, kernel_size=2, stride=2)
    assert type(deconv) is ConvTranspose2d and deconv(x).shape == (1, 3, 6, 8)
    shuffle = build_upsample_layer(
        dict(type="pixel_shuffle", scale_factor=2, upsample_kernel=3), in_channels=2, out_channels=5
    )
    assert isinstance(shuffle, PixelShufflePack) and shuffle(x).shape == (1, 5, 6, 8)
    with pytest.raises(TypeError):
        build_upsample_layer("nearest")
    with pytest.raises(KeyError):
        build_upsample_layer(dict(scale_factor=2))
    with pytest.raises(KeyError):
        build_upsample_layer(dict(type="bicubic_plus"))


def test_pixel_shuffle_pack():
    torch.manual_seed(0)
    layer = PixelShufflePack(2, 3, scale_factor=2, upsample_kernel=3)
    assert list(layer.state_dict()) == ["upsample_conv.weight", "upsample_conv.bias"]
    assert layer.upsample_conv.weight.shape == (12, 2, 3, 3)
    assert layer.upsample_conv.padding == (1, 1)
    assert torch.equal(layer.upsample_conv.bias, torch.zeros(12))  # xavier_init: bias 0
    bound = math.sqrt(6 / (2 * 9 + 12 * 9))  # xavier uniform, gain 1
    assert layer.upsample_conv.weight.abs().max() <= bound
    x = torch.randn(1, 2, 4, 4)
    assert torch.allclose(layer(x), F.pixel_shuffle(layer.upsample_conv(x), 2))


def test_build_plugin_layer_and_infer_abbr():
    name, layer = build_plugin_layer(dict(type="ContextBlock", ratio=0.25), in_channels=8)
    assert name == "context_block" and isinstance(layer, ContextBlock)
    name, _ = build_plugin_layer(dict(type="NonLocal2d"), postfix="_a", in_channels=4)
    assert name == "nonlocal_block_a"
    name, _ = build_plugin_layer(dict(type="GeneralizedAttention", num_heads=2), 3, in_channels=8)
    assert name == "gen_attention_block3"

    class FancyBlock(nn.Module):
        pass

    class GCBlock(nn.Module):
        pass

    assert infer_abbr(FancyBlock) == "fancy_block"
    assert infer_abbr(GCBlock) == "gc_block"
    with pytest.raises(TypeError):
        infer_abbr(FancyBlock())
    with pytest.raises(TypeError):
        build_plugin_layer("ContextBlock")
    with pytest.raises(KeyError):
        build_plugin_layer(dict(ratio=1))
    with pytest.raises(KeyError):
        build_plugin_layer(dict(type="NoPlugin"))
    with pytest.raises(AssertionError):
        build_plugin_layer(dict(type="ContextBlock", ratio=0.25), postfix=1.0, in_channels=8)


@pytest.mark.parametrize(
    ("size", "stride", "kernel"), [((7, 6), 2, 3), ((8, 8), 1, 3), ((5, 9), 3, 4)]
)
def test_conv2d_adaptive_padding_is_tensorflow_same(size, stride, kernel):
    torch.manual_seed(0)
    conv = Conv2dAdaptivePadding(2, 3, kernel, stride=stride, padding=5)
    assert conv.padding == (0, 0)  # the argument is ignored
    x = torch.randn(1, 2, *size)
    out = conv(x)
    assert out.shape[2:] == tuple(math.ceil(n / stride) for n in size)
    # TensorFlow's SAME: total padding max((out - 1) * s + k - n, 0), the extra one at the end.
    pads = []
    for n in reversed(size):
        total = max((math.ceil(n / stride) - 1) * stride + kernel - n, 0)
        pads += [total // 2, total - total // 2]
    assert torch.allclose(out, F.conv2d(F.pad(x, pads), conv.weight, conv.bias, stride), atol=1e-6)


def test_conv_ws_2d_standardises_each_filter():
    torch.manual_seed(0)
    weight = torch.randn(4, 2, 3, 3) * 3 + 1
    x = torch.randn(1, 2, 5, 5)
    flat = weight.reshape(4, -1)
    std_w = (weight - flat.mean(1).view(-1, 1, 1, 1)) / (flat.std(1).view(-1, 1, 1, 1) + 1e-5)
    assert torch.allclose(
        conv_ws_2d(x, weight, padding=1), F.conv2d(x, std_w, padding=1), atol=1e-5
    )
    conv = ConvWS2d(2, 4, 3, padding=1, eps=1e-5)
    assert conv.eps == 1e-5 and list(conv.state_dict()) == ["weight", "bias"]
    conv.weight.data.copy_(weight)
    assert torch.allclose(conv(x), F.conv2d(x, std_w, conv.bias, padding=1), atol=1e-5)


def test_conv_aws_keys_forward_and_loading_a_plain_conv():
    torch.manual_seed(0)
    aws = ConvAWS2d(2, 4, 3)
    assert list(aws.state_dict()) == ["weight", "bias", "weight_gamma", "weight_beta"]
    assert aws.weight_gamma.shape == (4, 1, 1, 1)
    x = torch.randn(1, 2, 5, 5)
    flat = aws.weight.reshape(4, -1)
    mean = flat.mean(1).view(-1, 1, 1, 1)
    std = torch.sqrt(flat.var(1) + 1e-5).view(-1, 1, 1, 1)
    assert torch.allclose(aws(x), F.conv2d(x, (aws.weight - mean) / std, aws.bias), atol=1e-5)

    # A plain conv's checkpoint: gamma/beta are rebuilt so the layer computes that conv.
    plain = nn.Conv2d(2, 4, 3)
    fresh = ConvAWS2d(2, 4, 3)
    result = fresh.load_state_dict(plain.state_dict(), strict=True)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert torch.allclose(fresh(x), plain(x), atol=1e-4)

    # An AWS checkpoint keeps its own gamma/beta.
    aws.weight_gamma.data.fill_(2.0)
    other = ConvAWS2d(2, 4, 3)
    other.load_state_dict(aws.state_dict())
    assert torch.equal(other.weight_gamma, torch.full((4, 1, 1, 1), 2.0))

    # Other missing keys are still reported.
    result = ConvAWS2d(2, 4, 3).load_state_dict({"weight": plain.weight.detach()}, strict=False)
    assert result.missing_keys == ["bias"]
