import torch

from mmpar.cnn import PLUGIN_LAYERS, build_plugin_layer
from mmpar.ops.cc_attention import CrissCrossAttention


def _reference(layer, x):
    """Loop over positions: softmax over the column (without self) and the row together."""
    n, c, h, w = x.shape
    q, k, v = layer.query_conv(x), layer.key_conv(x), layer.value_conv(x)
    out = torch.zeros_like(x)
    for b in range(n):
        for i in range(h):
            for j in range(w):
                keys, vals = [], []
                for ii in range(h):
                    if ii != i:
                        keys.append(k[b, :, ii, j])
                        vals.append(v[b, :, ii, j])
                for jj in range(w):
                    keys.append(k[b, :, i, jj])
                    vals.append(v[b, :, i, jj])
                energy = torch.stack(keys) @ q[b, :, i, j]
                attn = energy.softmax(0)
                out[b, :, i, j] = (torch.stack(vals) * attn[:, None]).sum(0)
    return layer.gamma.scale * out + x


def test_cc_attention_matches_loop_reference():
    torch.manual_seed(0)
    layer = CrissCrossAttention(16)
    with torch.no_grad():
        layer.gamma.scale.fill_(0.7)
    x = torch.randn(2, 16, 3, 4)
    torch.testing.assert_close(layer(x), _reference(layer, x), rtol=1e-4, atol=1e-5)


def test_cc_attention_starts_as_identity_and_keeps_mmcv_names():
    layer = CrissCrossAttention(16)
    x = torch.randn(1, 16, 4, 4)
    torch.testing.assert_close(layer(x), x)
    assert sorted(layer.state_dict()) == [
        "gamma.scale",
        "key_conv.bias",
        "key_conv.weight",
        "query_conv.bias",
        "query_conv.weight",
        "value_conv.bias",
        "value_conv.weight",
    ]
    assert layer.query_conv.out_channels == 2
    assert repr(layer) == "CrissCrossAttention(in_channels=16)"


def test_cc_attention_is_a_plugin_layer():
    assert PLUGIN_LAYERS.get("CrissCrossAttention") is CrissCrossAttention
    name, layer = build_plugin_layer(dict(type="CrissCrossAttention", in_channels=8))
    assert isinstance(layer, CrissCrossAttention)
