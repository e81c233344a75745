"""ContextBlock (GCNet): keys, init (starts as the identity), pooling and fusion."""

import pytest
import torch
from torch import nn

from mmpar.cnn.bricks import ContextBlock
from mmpar.cnn.bricks.context_block import last_zero_init

TRANSFORM = ["0.weight", "0.bias", "1.weight", "1.bias", "3.weight", "3.bias"]


def test_state_dict_keys():
    both = ContextBlock(8, 0.25, fusion_types=("channel_add", "channel_mul"))
    assert list(both.state_dict()) == [
        "conv_mask.weight",
        "conv_mask.bias",
        *(f"channel_add_conv.{k}" for k in TRANSFORM),
        *(f"channel_mul_conv.{k}" for k in TRANSFORM),
    ]
    avg = ContextBlock(8, 0.25, pooling_type="avg")
    assert list(avg.state_dict()) == [f"channel_add_conv.{k}" for k in TRANSFORM]
    assert avg.channel_mul_conv is None
    assert both.planes == 2 and both.channel_add_conv[1].normalized_shape == (2, 1, 1)


def test_it_starts_as_the_identity_and_marks_the_mask_conv():
    torch.manual_seed(0)
    block = ContextBlock(8, 0.5)
    for transform in (block.channel_add_conv,):
        assert torch.equal(transform[-1].weight, torch.zeros_like(transform[-1].weight))
        assert torch.equal(transform[-1].bias, torch.zeros(8))
    assert block.conv_mask.inited is True and torch.equal(block.conv_mask.bias, torch.zeros(1))
    x = torch.randn(2, 8, 4, 5)
    assert torch.allclose(block(x), x)


def test_forward_matches_a_direct_computation():
    torch.manual_seed(0)
    block = ContextBlock(6, 0.5, fusion_types=("channel_add", "channel_mul"))
    for p in block.parameters():
        nn.init.normal_(p)
    x = torch.randn(2, 6, 3, 4)
    weights = torch.softmax(block.conv_mask(x).flatten(2), dim=2)  # [N, 1, HW]
    context = (x.flatten(2) * weights).sum(-1).view(2, 6, 1, 1)
    expected = x * torch.sigmoid(block.channel_mul_conv(context)) + block.channel_add_conv(context)
    assert torch.allclose(block(x), expected, atol=1e-5)
    avg = ContextBlock(6, 0.5, pooling_type="avg", fusion_types=("channel_mul",))
    assert torch.allclose(avg.spatial_pool(x), x.mean((2, 3), keepdim=True), atol=1e-6)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(pooling_type="max"),
        dict(fusion_types=()),
        dict(fusion_types=("channel_sub",)),
        dict(fusion_types="channel_add"),
    ],
)
def test_bad_arguments_are_assertions(kwargs):
    with pytest.raises(AssertionError):
        ContextBlock(8, 0.25, **kwargs)


def test_last_zero_init():
    seq = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    last_zero_init(seq)
    assert torch.equal(seq[1].weight, torch.zeros(2, 2)) and seq[0].weight.abs().sum() > 0
    conv = nn.Conv2d(2, 2, 1)
    last_zero_init(conv)
    assert torch.equal(conv.weight, torch.zeros_like(conv.weight))
