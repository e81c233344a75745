"""Transformer bricks: registrations, mmcv's state-dict names, residual data flow, deprecations.

The expected key lists are facts read from mmcv 1.7.2's ``cnn/bricks/transformer.py``
(``self.attn = nn.MultiheadAttention``, ``self.layers = Sequential(...)`` in FFN, the
``attentions``/``ffns``/``norms`` ModuleLists, ``projection``/``norm``/``reduction``).
"""

import copy
import inspect

import pytest
import torch
from torch import nn

from mmpar.cnn.bricks import (
    ATTENTION,
    FEEDFORWARD_NETWORK,
    TRANSFORMER_LAYER,
    TRANSFORMER_LAYER_SEQUENCE,
)
from mmpar.cnn.bricks import transformer as T
from mmpar.cnn.bricks.drop import Dropout, DropPath

ATTN = dict(type="MultiheadAttention", embed_dims=8, num_heads=2)
FFN_CFG = dict(type="FFN", embed_dims=8, feedforward_channels=16)
POST_NORM = ("self_attn", "norm", "cross_attn", "norm", "ffn", "norm")
PRE_NORM = ("norm", "self_attn", "norm", "ffn")


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def test_classes_are_registered_under_mmcvs_names_and_built_by_the_builders():
    assert ATTENTION.get("MultiheadAttention") is T.MultiheadAttention
    assert FEEDFORWARD_NETWORK.get("FFN") is T.FFN
    assert TRANSFORMER_LAYER.get("BaseTransformerLayer") is T.BaseTransformerLayer
    assert TRANSFORMER_LAYER_SEQUENCE.get("TransformerLayerSequence") is T.TransformerLayerSequence
    assert isinstance(T.build_attention(ATTN), T.MultiheadAttention)
    assert T.build_feedforward_network(dict(embed_dims=8), dict(type="FFN")).embed_dims == 8
    layer = T.build_transformer_layer(
        dict(
            type="BaseTransformerLayer", attn_cfgs=ATTN, ffn_cfgs=FFN_CFG, operation_order=PRE_NORM
        )
    )
    assert isinstance(layer, T.BaseTransformerLayer)
    seq = T.build_transformer_layer_sequence(
        dict(
            type="TransformerLayerSequence",
            transformerlayers=dict(
                type="BaseTransformerLayer",
                attn_cfgs=ATTN,
                ffn_cfgs=FFN_CFG,
                operation_order=PRE_NORM,
            ),
            num_layers=2,
        )
    )
    assert len(seq.layers) == 2 and seq.pre_norm and seq.embed_dims == 8


def test_positional_encoding_builder_uses_its_registry():
    from mmpar.cnn.bricks import POSITIONAL_ENCODING

    @POSITIONAL_ENCODING.register_module()
    class _TestSinePE(nn.Module):
        def __init__(self, num_feats):
            super().__init__()
            self.num_feats = num_feats

    try:
        assert T.build_positional_encoding(dict(type="_TestSinePE", num_feats=4)).num_feats == 4
    finally:
        POSITIONAL_ENCODING.module_dict.pop("_TestSinePE")


def test_multihead_attention_state_dict_and_value_match_torch():
    attn = T.MultiheadAttention(8, 2).eval()
    assert list(attn.state_dict()) == [
        "attn.in_proj_weight",
        "attn.in_proj_bias",
        "attn.out_proj.weight",
        "attn.out_proj.bias",
    ]
    q, k = torch.rand(5, 2, 8), torch.rand(7, 2, 8)
    expected = q + attn.attn(q, k, k)[0]  # identity + attention, no dropout in eval
    assert torch.allclose(attn(q, k), expected, atol=1e-6)
    # The key's positional encoding defaults to the query's when the shapes match.
    pos = torch.rand(5, 2, 8)
    assert torch.allclose(attn(q, query_pos=pos), q + attn.attn(q + pos, q + pos, q)[0], atol=1e-6)


def test_batch_first_is_the_transposed_computation():
    attn = T.MultiheadAttention(8, 2, batch_first=True).eval()
    plain = T.MultiheadAttention(8, 2).eval()
    plain.load_state_dict(attn.state_dict())
    q, k = torch.rand(2, 5, 8), torch.rand(2, 7, 8)
    out = attn(q, k)
    assert out.shape == (2, 5, 8)
    assert torch.allclose(out, plain(q.transpose(0, 1), k.transpose(0, 1)).transpose(0, 1))


def test_multihead_attention_deprecated_dropout_and_residual():
    with pytest.warns(DeprecationWarning, match="dropout"):
        attn = T.MultiheadAttention(8, 2, dropout=0.3)
    assert attn.attn.dropout == 0.3
    assert isinstance(attn.dropout_layer, Dropout) and attn.dropout_layer.p == 0.3
    # mmcv wrote the value into its shared default dict; the next instance must not see it.
    assert T.MultiheadAttention(8, 2).dropout_layer.p == 0.0
    attn.eval()
    q, other = torch.rand(3, 1, 8), torch.rand(3, 1, 8)
    with pytest.warns(DeprecationWarning, match="residual"):
        old = attn(q, residual=other)
    assert torch.allclose(old, attn(q, identity=other))
    assert isinstance(T.MultiheadAttention(8, 2, dropout_layer=None).dropout_layer, nn.Identity)
    drop_path = T.MultiheadAttention(8, 2, dropout_layer=dict(type="DropPath", drop_prob=0.1))
    assert isinstance(drop_path.dropout_layer, DropPath)


def test_ffn_layers_keys_and_forward():
    ffn = T.FFN(8, 16, num_fcs=3).eval()
    assert list(ffn.state_dict()) == [
        "layers.0.0.weight",
        "layers.0.0.bias",
        "layers.1.0.weight",
        "layers.1.0.bias",
        "layers.2.weight",
        "layers.2.bias",
    ]
    assert ffn.layers[0][1] is ffn.activate  # one activation module, shared as in mmcv
    x = torch.rand(4, 8)
    hidden = torch.relu(ffn.layers[1][0](torch.relu(ffn.layers[0][0](x))))
    assert torch.allclose(ffn(x), x + ffn.layers[2](hidden), atol=1e-6)
    other = torch.rand(4, 8)
    assert torch.allclose(ffn(x, identity=other), other + ffn.layers[2](hidden), atol=1e-6)
    no_identity = T.FFN(8, 16, add_identity=False).eval()
    assert torch.allclose(no_identity(x), no_identity.layers(x))
    with pytest.raises(AssertionError, match="num_fcs"):
        T.FFN(8, 16, num_fcs=1)


def test_ffn_deprecated_arguments():
    with pytest.warns(DeprecationWarning) as record:
        ffn = T.FFN(8, 16, dropout=0.2, add_residual=False)
    messages = " ".join(str(r.message) for r in record)
    assert "dropout" in messages and "add_residual" in messages
    assert ffn.add_identity is False
    assert [m.p for m in ffn.modules() if isinstance(m, nn.Dropout)] == [0.2, 0.2]
    ffn.eval()
    x = torch.rand(2, 8)
    assert torch.allclose(ffn(x), ffn.layers(x))  # no identity added
    identity_ffn = T.FFN(8, 16).eval()
    with pytest.warns(DeprecationWarning, match="residual"):
        out = identity_ffn(x, residual=torch.zeros(2, 8))
    assert torch.allclose(out, identity_ffn.layers(x))


def test_transformer_layer_keys_and_post_norm_flow():
    layer = T.BaseTransformerLayer(attn_cfgs=ATTN, ffn_cfgs=FFN_CFG, operation_order=POST_NORM)
    layer.eval()
    attn_keys = [
        "attn.in_proj_weight",
        "attn.in_proj_bias",
        "attn.out_proj.weight",
        "attn.out_proj.bias",
    ]
    ffn_keys = ["layers.0.0.weight", "layers.0.0.bias", "layers.1.weight", "layers.1.bias"]
    assert list(layer.state_dict()) == (
        [f"attentions.0.{k}" for k in attn_keys]
        + [f"attentions.1.{k}" for k in attn_keys]
        + [f"ffns.0.{k}" for k in ffn_keys]
        + [f"norms.{i}.{p}" for i in range(3) for p in ("weight", "bias")]
    )
    assert [a.operation_name for a in layer.attentions] == ["self_attn", "cross_attn"]
    assert not layer.pre_norm and layer.embed_dims == 8
    q, k = torch.rand(5, 2, 8), torch.rand(7, 2, 8)
    a, f, n = layer.attentions, layer.ffns, layer.norms
    x = n[0](a[0](q, q, q))
    x = n[1](a[1](x, k, k))
    expected = n[2](f[0](x))
    assert torch.allclose(layer(q, k, k), expected, atol=1e-6)


def test_pre_norm_layer_keeps_the_residual_before_the_norm():
    layer = T.BaseTransformerLayer(attn_cfgs=ATTN, ffn_cfgs=FFN_CFG, operation_order=PRE_NORM)
    layer.eval()
    assert layer.pre_norm
    q = torch.rand(5, 2, 8)
    a, f, n = layer.attentions[0], layer.ffns[0], layer.norms
    x = n[0](q)
    x = a(x, x, x, identity=q)
    expected = f(n[1](x), identity=x)
    assert torch.allclose(layer(q), expected, atol=1e-6)


def test_layer_batch_first_reaches_the_attentions_and_is_checked():
    layer = T.BaseTransformerLayer(
        attn_cfgs=ATTN, ffn_cfgs=FFN_CFG, operation_order=PRE_NORM, batch_first=True
    )
    assert layer.attentions[0].batch_first
    assert layer(torch.rand(2, 5, 8)).shape == (2, 5, 8)
    with pytest.raises(AssertionError, match="batch_first"):
        T.BaseTransformerLayer(
            attn_cfgs=dict(ATTN, batch_first=False),
            ffn_cfgs=FFN_CFG,
            operation_order=PRE_NORM,
            batch_first=True,
        )


def test_layer_deprecated_ffn_arguments_move_into_ffn_cfgs():
    with pytest.warns(DeprecationWarning, match="ffn_cfgs"):
        layer = T.BaseTransformerLayer(
            attn_cfgs=ATTN,
            ffn_cfgs=dict(type="FFN"),
            operation_order=PRE_NORM,
            feedforward_channels=32,
            ffn_dropout=0.1,
            ffn_num_fcs=3,
        )
    ffn = layer.ffns[0]
    assert (ffn.feedforward_channels, ffn.num_fcs, ffn.embed_dims) == (32, 3, 8)
    assert {m.p for m in ffn.modules() if isinstance(m, nn.Dropout)} == {0.1}
    # The default ffn_cfgs dict is not changed for later layers (mmcv wrote into it).
    default = inspect.signature(T.BaseTransformerLayer).parameters["ffn_cfgs"].default
    assert (default["feedforward_channels"], default["ffn_drop"], default["num_fcs"]) == (
        1024,
        0.0,
        2,
    )


def test_layer_config_errors():
    with pytest.raises(AssertionError, match="operation_order"):
        T.BaseTransformerLayer(attn_cfgs=ATTN, ffn_cfgs=FFN_CFG, operation_order=("attn",))
    with pytest.raises(AssertionError, match="attention"):
        T.BaseTransformerLayer(attn_cfgs=[ATTN], ffn_cfgs=FFN_CFG, operation_order=POST_NORM)
    with pytest.raises(AssertionError, match="embed_dims"):
        T.BaseTransformerLayer(  # the default ffn_cfgs has embed_dims=256, as in mmcv
            attn_cfgs=ATTN, operation_order=PRE_NORM
        )
    with pytest.raises(TypeError, match="operation_order"):
        T.BaseTransformerLayer(attn_cfgs=ATTN, ffn_cfgs=FFN_CFG)
    layer = T.BaseTransformerLayer(attn_cfgs=ATTN, ffn_cfgs=FFN_CFG, operation_order=POST_NORM)
    with pytest.raises(AssertionError, match="attn_masks"):
        layer(torch.rand(5, 2, 8), attn_masks=[None])
    cfgs = [copy.deepcopy(ATTN), copy.deepcopy(ATTN)]
    T.BaseTransformerLayer(attn_cfgs=cfgs, ffn_cfgs=[FFN_CFG], operation_order=POST_NORM)
    assert cfgs == [ATTN, ATTN]  # the caller's configs are not written into


def test_one_attn_mask_tensor_is_used_for_every_attention():
    layer = T.BaseTransformerLayer(attn_cfgs=ATTN, ffn_cfgs=FFN_CFG, operation_order=POST_NORM)
    layer.eval()
    q, k = torch.rand(5, 2, 8), torch.rand(5, 2, 8)
    mask = torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1)
    with pytest.warns(UserWarning, match="same attn_mask"):
        shared = layer(q, k, k, attn_masks=mask)
    assert torch.allclose(shared, layer(q, k, k, attn_masks=[mask, mask]))
    assert not torch.allclose(shared, layer(q, k, k))


def test_layer_sequence_keys_and_chaining():
    seq = T.TransformerLayerSequence(
        transformerlayers=dict(
            type="BaseTransformerLayer", attn_cfgs=ATTN, ffn_cfgs=FFN_CFG, operation_order=PRE_NORM
        ),
        num_layers=2,
    ).eval()
    keys = list(seq.state_dict())
    assert keys[0] == "layers.0.attentions.0.attn.in_proj_weight"
    assert keys[-1] == "layers.1.norms.1.bias" and len(keys) == 2 * 12
    q = torch.rand(5, 2, 8)
    assert torch.allclose(seq(q, None, None), seq.layers[1](seq.layers[0](q)))
    with pytest.raises(AssertionError):
        T.TransformerLayerSequence(
            transformerlayers=[dict(type="BaseTransformerLayer")], num_layers=2
        )


@pytest.mark.parametrize(
    ("padding", "expected"),
    [("corner", [0, 15, 0, 1]), ("same", [7, 8, 0, 1])],
)
def test_adaptive_padding_covers_the_input(padding, expected):
    pad = T.AdaptivePadding(kernel_size=16, stride=16, padding=padding)
    assert pad.get_pad_shape((15, 17)) == (1, 15)  # 15 -> 16 rows, 17 -> 32 columns
    x = torch.rand(1, 1, 15, 17)
    out = pad(x)
    assert out.shape[-2:] == (16, 32)
    left, right, top, bottom = expected
    assert torch.equal(out[..., top : top + 15, left : left + 17], x)
    assert torch.count_nonzero(out) == torch.count_nonzero(x)  # zeros elsewhere
    assert pad(torch.rand(1, 1, 16, 32)).shape[-2:] == (16, 32)
    with pytest.raises(AssertionError):
        T.AdaptivePadding(padding="valid")


def test_patch_embed_shapes_keys_and_init_out_size():
    embed = T.PatchEmbed(3, 8, kernel_size=4, stride=4, norm_cfg=dict(type="LN"), input_size=15)
    assert list(embed.state_dict()) == [
        "projection.weight",
        "projection.bias",
        "norm.weight",
        "norm.bias",
    ]
    tokens, size = embed(torch.rand(2, 3, 15, 17))
    assert size == (4, 5) and tokens.shape == (2, 20, 8)  # corner padding to 16 x 20
    assert embed.init_input_size == (15, 15) and embed.init_out_size == (4, 4)
    plain = T.PatchEmbed(3, 8, kernel_size=3, stride=2, padding=1, input_size=(9, 9))
    assert plain.adaptive_padding is None and plain.init_out_size == (5, 5)
    assert plain(torch.rand(1, 3, 9, 9))[1] == (5, 5)
    assert T.PatchEmbed(3, 8, kernel_size=4, stride=None).projection.stride == (4, 4)


def test_patch_merging_shapes_and_keys():
    merge = T.PatchMerging(4, 6)
    assert list(merge.state_dict()) == ["norm.weight", "norm.bias", "reduction.weight"]
    assert merge.reduction.in_features == 16  # 2 x 2 x 4 channels per merged token
    x = torch.rand(2, 5 * 7, 4)
    out, size = merge(x, (5, 7))
    assert size == (3, 4) and out.shape == (2, 12, 6)  # padded to 6 x 8, then halved
    with pytest.raises(AssertionError):
        merge(x, (5, 6))
    no_norm = T.PatchMerging(4, 6, norm_cfg=None, padding=0, bias=True)
    assert list(no_norm.state_dict()) == ["reduction.weight", "reduction.bias"]
    out, size = no_norm(torch.rand(1, 4 * 4, 4), (4, 4))
    assert size == (2, 2) and out.shape == (1, 4, 6)
