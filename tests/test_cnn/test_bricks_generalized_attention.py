"""GeneralizedAttention: keys (mmcv's), each energy term against a direct computation, init,
strides and the spatial-range mask."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from mmpar.cnn.bricks import GeneralizedAttention

ALL_TYPES = [f"{i:04b}" for i in range(1, 16)]


def test_state_dict_keys():
    assert list(GeneralizedAttention(24, num_heads=3).state_dict()) == [
        "appr_bias",
        "geom_bias",
        "gamma",
        "query_conv.weight",
        "key_conv.weight",
        "value_conv.weight",
        "appr_geom_fc_x.weight",
        "appr_geom_fc_y.weight",
        "proj_conv.weight",
        "proj_conv.bias",
    ]
    assert list(GeneralizedAttention(24, num_heads=3, attention_type="0010").state_dict()) == [
        "appr_bias",
        "gamma",
        "key_conv.weight",
        "value_conv.weight",
        "proj_conv.weight",
        "proj_conv.bias",
    ]
    ranged = GeneralizedAttention(256, spatial_range=2, num_heads=8)
    assert list(ranged.state_dict())[:4] == [
        "appr_bias",
        "geom_bias",
        "gamma",
        "local_constraint_map",
    ]


def test_attributes_and_defaults():
    block = GeneralizedAttention(18)
    assert (block.num_heads, block.qk_embed_dim, block.v_dim) == (9, 2, 2)
    assert (block.kv_stride, block.q_stride, block.spatial_range) == (2, 1, -1)
    assert block.position_embedding_dim == 18 and block.attention_type == [True] * 4
    assert isinstance(block.kv_downsample, nn.AvgPool2d) and block.q_downsample is None
    assert GeneralizedAttention(16, position_embedding_dim=8).appr_geom_fc_x.in_features == 4
    assert GeneralizedAttention._abbr_ == "gen_attention_block"


def test_init():
    torch.manual_seed(0)
    block = GeneralizedAttention(64, num_heads=4)
    assert torch.equal(block.gamma, torch.zeros(1))
    x = torch.randn(1, 64, 4, 4)
    assert torch.equal(block(x), x)  # gamma 0: the identity
    # Kaiming uniform, fan-in, leaky ReLU with a=1: bound sqrt(3 / fan_in).
    for module in (block.query_conv, block.key_conv, block.value_conv, block.proj_conv):
        assert module.kaiming_init is True
        assert module.weight.abs().max() <= math.sqrt(3 / 64)
        assert module.weight.abs().max() > 0.8 * math.sqrt(3 / 64)
    assert block.appr_geom_fc_x.weight.abs().max() <= math.sqrt(3 / 32)
    assert torch.equal(block.proj_conv.bias, torch.zeros(64))
    bound = 1 / math.sqrt(16 * 2)
    assert block.appr_bias.abs().max() <= bound and block.geom_bias.abs().max() <= bound


def _reference(block, x):
    """The output from the paper's definition: the sum of the enabled terms, per position pair."""
    heads, dim = block.num_heads, block.qk_embed_dim
    use = block.attention_type
    x_q = block.q_downsample(x) if block.q_downsample is not None else x
    x_kv = block.kv_downsample(x) if block.kv_downsample is not None else x
    n, _, h, w = x_q.shape
    _, _, hk, wk = x_kv.shape
    energy = torch.zeros(n, heads, h, w, hk, wk)
    if use[1] or use[3]:
        ex, ey = block.get_position_embedding(
            h, w, hk, wk, block.q_stride, block.kv_stride, x.device, x.dtype,
            block.position_embedding_dim,
        )  # fmt: skip
        px = block.appr_geom_fc_x(ex).view(w, wk, heads, dim) / math.sqrt(2)  # [w, wk, H, D]
        py = block.appr_geom_fc_y(ey).view(h, hk, heads, dim) / math.sqrt(2)  # [h, hk, H, D]
        # Relative position of query (i, j) and key (k, l): px[j, l] + py[i, k].
        pos = (
            px.permute(2, 0, 1, 3)[:, None, :, None, :, :]
            + py.permute(2, 0, 1, 3)[:, :, None, :, None, :]
        )
    if use[0] or use[1]:
        q = block.query_conv(x_q).view(n, heads, dim, h, w)
    if use[0] or use[2]:
        k = block.key_conv(x_kv).view(n, heads, dim, hk, wk)
    if use[0]:
        energy += torch.einsum("nadij,nadkl->naijkl", q, k)
    if use[1]:
        energy += torch.einsum("nadij,aijkld->naijkl", q, pos)
    if use[2]:
        energy += torch.einsum("ad,nadkl->nakl", block.appr_bias.view(heads, dim), k)[
            :, :, None, None
        ]
    if use[3]:
        energy += torch.einsum("ad,aijkld->aijkl", block.geom_bias.view(heads, dim), pos)[None]
    attention = energy.view(n, heads, h * w, hk * wk).softmax(-1)
    v = block.value_conv(x_kv).view(n, heads, block.v_dim, hk * wk)
    out = torch.einsum("napq,nadq->nadp", attention, v).reshape(n, -1, h, w)
    out = block.proj_conv(out)
    if block.q_downsample is not None:
        out = F.interpolate(out, size=x.shape[2:], mode="bilinear", align_corners=False)
    return block.gamma * out + x


# Every combination on a non-square map with the default strides; the strides on a few.
CASES = [(t, 1, 2, (4, 6)) for t in ALL_TYPES] + [
    (t, q, kv, size)
    for t in ("1111", "0100", "0010")
    for q, kv, size in ((2, 1, (4, 4)), (1, 1, (3, 5)))
]


@pytest.mark.parametrize(("attention_type", "q_stride", "kv_stride", "size"), CASES)
def test_every_term_combination_matches_the_definition(attention_type, q_stride, kv_stride, size):
    torch.manual_seed(0)
    block = GeneralizedAttention(
        24, num_heads=3, attention_type=attention_type, q_stride=q_stride, kv_stride=kv_stride
    )
    nn.init.constant_(block.gamma, 0.7)
    x = torch.randn(2, 24, *size)
    out = block(x)
    assert out.shape == x.shape
    assert torch.allclose(out, _reference(block, x), atol=1e-4)


def _mask_by_loops(max_len, spatial_range, kv_stride):
    max_kv = int((max_len - 1.0) / kv_stride + 1)
    mask = torch.ones(max_len, max_len, max_kv, max_kv, dtype=torch.uint8)
    for iy in range(max_len):
        for ix in range(max_len):
            y0 = max((iy - spatial_range) // kv_stride, 0)
            y1 = min((iy + spatial_range + 1) // kv_stride + 1, max_len)
            x0 = max((ix - spatial_range) // kv_stride, 0)
            x1 = min((ix + spatial_range + 1) // kv_stride + 1, max_len)
            mask[iy, ix, y0:y1, x0:x1] = 0
    return mask


def test_spatial_range_mask_and_its_effect():
    torch.manual_seed(0)
    block = GeneralizedAttention(512, spatial_range=3, num_heads=8, kv_stride=2)
    mask = block.local_constraint_map
    assert mask.shape == (42, 42, 21, 21) and mask.dtype == torch.uint8
    assert not mask.requires_grad
    assert torch.equal(mask[:12, :12], _mask_by_loops(42, 3, 2)[:12, :12])
    assert GeneralizedAttention(256, spatial_range=2).local_constraint_map.shape == (84, 84, 42, 42)
    small = GeneralizedAttention(512, spatial_range=1, num_heads=8, kv_stride=1)
    assert torch.equal(small.local_constraint_map, _mask_by_loops(42, 1, 1))
    # A key out of range gets no attention: changing it leaves the output where it is masked.
    nn.init.constant_(small.gamma, 1.0)
    small.kv_downsample = None
    x = torch.randn(1, 512, 6, 6)
    far = x.clone()
    far[:, :, 5, 5] += 10  # out of range of query (0, 0) with spatial_range 1
    assert torch.allclose(small(x)[:, :, 0, 0], small(far)[:, :, 0, 0], atol=1e-5)
    assert not torch.allclose(small(x)[:, :, 4, 4], small(far)[:, :, 4, 4], atol=1e-5)


def test_spatial_range_needs_256_or_512_channels():
    with pytest.raises(ValueError, match="256 or 512"):
        GeneralizedAttention(64, spatial_range=2)


def test_position_embedding_shapes_and_dtype():
    block = GeneralizedAttention(16, num_heads=2)
    ex, ey = block.get_position_embedding(3, 5, 2, 3, 1, 2, "cpu", torch.float64, 16)
    assert ex.shape == (5, 3, 8) and ey.shape == (3, 2, 8) and ex.dtype == torch.float64
    # Zero offset: sin 0 = 0 in the first half, cos 0 = 1 in the second.
    assert torch.equal(ex[0, 0], torch.tensor([0.0] * 4 + [1.0] * 4, dtype=torch.float64))
