import math

import pytest
import torch
from torch.autograd import gradcheck

from mmpar.cnn.bricks.registry import ATTENTION
from mmpar.ops.multi_scale_deform_attn import (
    MultiScaleDeformableAttention,
    MultiScaleDeformableAttnFunction,
    multi_scale_deformable_attn_pytorch,
)

SHAPES = torch.tensor([[3, 4], [2, 2]])


def _bilinear(feat, x, y):
    """feat (D, H, W) at pixel coordinates (x, y); zeros outside."""
    d, h, w = feat.shape
    x0, y0 = math.floor(x), math.floor(y)
    out = torch.zeros(d, dtype=feat.dtype)
    for yi in (y0, y0 + 1):
        for xi in (x0, x0 + 1):
            if 0 <= xi < w and 0 <= yi < h:
                out = out + feat[:, yi, xi] * (1 - abs(x - xi)) * (1 - abs(y - yi))
    return out


def _reference(value, shapes, locs, weights):
    bs, _, heads, dims = value.shape
    _, nq, _, levels, points, _ = locs.shape
    out = torch.zeros(bs, nq, heads * dims, dtype=value.dtype)
    starts = [0]
    for h, w in shapes.tolist():
        starts.append(starts[-1] + h * w)
    for b in range(bs):
        for q in range(nq):
            for m in range(heads):
                acc = torch.zeros(dims, dtype=value.dtype)
                for lv, (h, w) in enumerate(shapes.tolist()):
                    fmap = value[b, starts[lv] : starts[lv + 1], m].T.reshape(dims, h, w)
                    for p in range(points):
                        lx, ly = locs[b, q, m, lv, p].tolist()
                        # location in [0, 1] of the map's outer edges -> pixel coordinates
                        sample = _bilinear(fmap, lx * w - 0.5, ly * h - 0.5)
                        acc = acc + weights[b, q, m, lv, p] * sample
                out[b, q, m * dims : (m + 1) * dims] = acc
    return out


def _inputs(dtype=torch.float32):
    torch.manual_seed(0)
    bs, heads, dims, nq, points = 2, 2, 3, 3, 2
    value = torch.randn(bs, 16, heads, dims, dtype=dtype)
    locs = torch.rand(bs, nq, heads, 2, points, 2, dtype=dtype) * 1.2 - 0.1
    weights = torch.rand(bs, nq, heads, 2, points, dtype=dtype)
    return value, locs, weights


def test_pytorch_path_matches_loop_reference():
    value, locs, weights = _inputs()
    out = multi_scale_deformable_attn_pytorch(value, SHAPES, locs, weights)
    assert out.shape == (2, 3, 6)
    torch.testing.assert_close(out, _reference(value, SHAPES, locs, weights))


def test_function_apply_forwards_to_pytorch_path():
    value, locs, weights = _inputs()
    start = torch.tensor([0, 12])
    out = MultiScaleDeformableAttnFunction.apply(
        value, SHAPES, start, locs.double(), weights.double(), 64
    )
    assert out.dtype == torch.float32
    torch.testing.assert_close(
        out, multi_scale_deformable_attn_pytorch(value, SHAPES, locs, weights)
    )


def test_pytorch_path_gradcheck():
    value, locs, weights = _inputs(torch.float64)
    value = value[:1, :, :1, :2].clone().requires_grad_()
    locs = (locs[:1, :2, :1] * 0.8 + 0.1).clone().requires_grad_()
    weights = weights[:1, :2, :1].clone().requires_grad_()
    assert gradcheck(
        lambda v, sl, aw: multi_scale_deformable_attn_pytorch(v, SHAPES, sl, aw),
        (value, locs, weights),
    )


def test_module_state_dict_registry_and_init():
    assert ATTENTION.get("MultiScaleDeformableAttention") is MultiScaleDeformableAttention
    attn = MultiScaleDeformableAttention(embed_dims=8, num_heads=4, num_levels=2, num_points=3)
    assert sorted(attn.state_dict()) == [
        "attention_weights.bias",
        "attention_weights.weight",
        "output_proj.bias",
        "output_proj.weight",
        "sampling_offsets.bias",
        "sampling_offsets.weight",
        "value_proj.bias",
        "value_proj.weight",
    ]
    assert attn.sampling_offsets.weight.abs().sum() == 0
    bias = attn.sampling_offsets.bias.view(4, 2, 3, 2)
    # head 0 looks right (+x), head 1 down (+y), head 2 left, head 3 up; point i at i + 1
    torch.testing.assert_close(bias[0, 1, :, 0], torch.tensor([1.0, 2.0, 3.0]))
    torch.testing.assert_close(bias[1, 0, 2], torch.tensor([0.0, 3.0]), atol=1e-6, rtol=0)
    torch.testing.assert_close(bias[2, 0, 0], torch.tensor([-1.0, 0.0]), atol=1e-6, rtol=0)
    assert attn.attention_weights.weight.abs().sum() == 0
    assert attn.value_proj.bias.abs().sum() == 0


def test_module_forward_matches_manual_computation():
    torch.manual_seed(0)
    attn = MultiScaleDeformableAttention(embed_dims=8, num_heads=2, num_levels=2, num_points=2)
    attn.eval()
    torch.nn.init.normal_(attn.sampling_offsets.weight, std=0.1)
    torch.nn.init.normal_(attn.attention_weights.weight, std=0.1)
    nq, bs = 3, 2
    query = torch.randn(nq, bs, 8)
    value = torch.randn(16, bs, 8)
    ref = torch.rand(bs, nq, 2, 2)
    start = torch.tensor([0, 12])
    out = attn(
        query, value=value, reference_points=ref, spatial_shapes=SHAPES, level_start_index=start
    )
    assert out.shape == (nq, bs, 8)
    # by hand, batch first
    q = query.transpose(0, 1)
    v = attn.value_proj(value.transpose(0, 1)).view(bs, 16, 2, 4)
    off = attn.sampling_offsets(q).view(bs, nq, 2, 2, 2, 2)
    w = attn.attention_weights(q).view(bs, nq, 2, 4).softmax(-1).view(bs, nq, 2, 2, 2)
    norm = torch.tensor([[4.0, 3.0], [2.0, 2.0]])  # (w, h) per level
    locs = ref[:, :, None, :, None, :] + off / norm[None, None, None, :, None, :]
    expected = attn.output_proj(_reference(v, SHAPES, locs, w)).transpose(0, 1) + query
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)

    # batch_first gives the same numbers; boxes (cx, cy, w, h) are accepted
    attn.batch_first = True
    out_bf = attn(
        query.transpose(0, 1),
        value=value.transpose(0, 1),
        reference_points=ref,
        spatial_shapes=SHAPES,
        level_start_index=start,
    )
    torch.testing.assert_close(out_bf, out.transpose(0, 1))
    boxes = torch.cat([ref, torch.full_like(ref, 0.5)], -1)
    out_box = attn(
        query.transpose(0, 1),
        value=value.transpose(0, 1),
        reference_points=boxes,
        spatial_shapes=SHAPES,
        level_start_index=start,
    )
    locs = ref[:, :, None, :, None, :] + off / 2 * 0.5 * 0.5  # offset / points * wh * 0.5
    expected = attn.output_proj(_reference(v, SHAPES, locs, w)) + query.transpose(0, 1)
    torch.testing.assert_close(out_box, expected, rtol=1e-4, atol=1e-5)


def test_module_errors():
    with pytest.raises(ValueError, match="divisible"):
        MultiScaleDeformableAttention(embed_dims=10, num_heads=4)
    with pytest.warns(UserWarning, match="power of 2"):
        MultiScaleDeformableAttention(embed_dims=12, num_heads=2, num_levels=1, num_points=1)
    attn = MultiScaleDeformableAttention(embed_dims=8, num_heads=2, num_levels=1, num_points=1)
    with pytest.raises(ValueError, match="2 or 4"):
        attn(
            torch.zeros(4, 1, 8),
            reference_points=torch.zeros(1, 4, 1, 3),
            spatial_shapes=torch.tensor([[2, 2]]),
        )
    # mmcv's old argument name still works, with a warning
    with pytest.warns(DeprecationWarning):
        attn(
            torch.zeros(4, 1, 8),
            residual=torch.zeros(4, 1, 8),
            reference_points=torch.zeros(1, 4, 1, 2),
            spatial_shapes=torch.tensor([[2, 2]]),
        )
