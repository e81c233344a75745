"""SAConv2d ('SAC'): the switch between its two branches, deformable mode, mmcv's names."""

import torch
import torch.nn.functional as F

from mmpar.cnn import CONV_LAYERS, build_conv_layer
from mmpar.ops import SAConv2d


def _standardised(layer):
    return layer._get_weight(layer.weight).detach()


def test_fresh_layer_is_the_small_field_weight_standardised_conv_without_bias():
    layer = SAConv2d(3, 4, 3, padding=1, dilation=1)
    with torch.no_grad():
        layer.bias.fill_(5.0)  # mmcv's SAC never adds its bias
    x = torch.randn(2, 3, 8, 8)
    assert torch.allclose(layer(x), F.conv2d(x, _standardised(layer), padding=1), atol=1e-5)


def test_switch_zero_selects_the_large_field_branch_with_weight_diff():
    layer = SAConv2d(3, 4, 3, padding=1, dilation=1)
    with torch.no_grad():
        layer.switch.bias.zero_()
        layer.weight_diff.normal_()
    x = torch.randn(1, 3, 9, 9)
    weight = _standardised(layer) + layer.weight_diff.detach()
    expected = F.conv2d(x, weight, padding=3, dilation=3)
    assert torch.allclose(layer(x), expected, atol=1e-5)


def test_context_and_deformable_branches():
    torch.manual_seed(0)
    plain = SAConv2d(3, 4, 3, stride=2, padding=1)
    deform = SAConv2d(3, 4, 3, stride=2, padding=1, use_deform=True)
    deform.load_state_dict(plain.state_dict(), strict=False)
    with torch.no_grad():
        for layer in (plain, deform):
            layer.switch.bias.fill_(0.3)
            layer.pre_context.bias.fill_(0.2)
            layer.post_context.bias.fill_(-0.1)
    x = torch.randn(1, 3, 8, 8)
    # Zero offsets: the deformable branches are the plain ones.
    assert torch.allclose(deform(x), plain(x), atol=1e-5)
    with torch.no_grad():
        deform.offset_l.bias.fill_(0.5)
    assert not torch.allclose(deform(x), plain(x), atol=1e-3)
    deform(x).sum().backward()
    assert deform.offset_l.weight.grad.abs().sum() > 0 and deform.switch.bias.grad is not None


def test_state_dict_names_and_registry():
    layer = build_conv_layer(dict(type="SAC", use_deform=True), 3, 4, 3, padding=1)
    assert CONV_LAYERS.get("SAC") is SAConv2d and isinstance(layer, SAConv2d)
    assert sorted(layer.state_dict()) == sorted(
        [
            "weight", "bias", "weight_gamma", "weight_beta", "weight_diff",
            "switch.weight", "switch.bias", "pre_context.weight", "pre_context.bias",
            "post_context.weight", "post_context.bias", "offset_s.weight", "offset_s.bias",
            "offset_l.weight", "offset_l.bias",
        ]
    )  # fmt: skip
