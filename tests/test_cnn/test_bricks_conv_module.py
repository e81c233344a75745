"""ConvModule and DepthwiseSeparableConvModule: keys, bias, init, padding, order, flags."""

import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from mmpar.cnn.bricks import ConvModule, DepthwiseSeparableConvModule, build_plugin_layer
from mmpar.cnn.bricks.conv_ws import ConvWS2d
from mmpar.cnn.bricks.wrappers import Conv2d


def _keys(module):
    return list(module.state_dict())


# State-dict keys of mmcv 1.7.2's ConvModule (read from its source: conv, then the norm
# layer under its abbreviation; spectral norm renames the weight).
@pytest.mark.parametrize(
    ("kwargs", "keys"),
    [
        ({}, ["conv.weight", "conv.bias"]),
        (
            dict(norm_cfg=dict(type="BN")),
            [
                "conv.weight",
                "bn.weight",
                "bn.bias",
                "bn.running_mean",
                "bn.running_var",
                "bn.num_batches_tracked",
            ],
        ),
        (
            dict(norm_cfg=dict(type="GN", num_groups=2), padding_mode="reflect", padding=1),
            ["conv.weight", "gn.weight", "gn.bias"],
        ),
        (
            dict(with_spectral_norm=True),
            ["conv.bias", "conv.weight_orig", "conv.weight_u", "conv.weight_v"],
        ),
        (dict(norm_cfg=dict(type="IN", affine=True)), ["conv.weight", "in.weight", "in.bias"]),
        (dict(act_cfg=dict(type="PReLU")), ["conv.weight", "conv.bias", "activate.weight"]),
    ],
)
def test_state_dict_keys(kwargs, keys):
    assert _keys(ConvModule(3, 4, 3, **kwargs)) == keys


def test_attributes_and_defaults():
    m = ConvModule(3, 8, 3, stride=2, padding=1, dilation=1, groups=1)
    assert isinstance(m.conv, nn.Conv2d) and not isinstance(m.conv, Conv2d)
    assert (m.in_channels, m.out_channels, m.kernel_size) == (3, 8, (3, 3))
    assert (m.stride, m.padding, m.dilation, m.groups) == ((2, 2), 1, (1, 1), 1)
    assert (m.transposed, m.output_padding) == (False, (0, 0))
    assert m.with_bias is True and m.with_norm is False and m.norm is None and m.norm_name is None
    assert isinstance(m.activate, nn.ReLU) and m.activate.inplace
    assert m.order == ("conv", "norm", "act") and m.with_activation
    assert ConvModule._abbr_ == "conv_block"


def test_bias_auto_follows_the_norm():
    assert ConvModule(3, 4, 1).conv.bias is not None
    with_bn = ConvModule(3, 4, 1, norm_cfg=dict(type="BN"))
    assert with_bn.conv.bias is None and with_bn.with_bias is False
    assert ConvModule(3, 4, 1, bias=False).conv.bias is None
    with pytest.warns(UserWarning, match="Unnecessary conv bias"):
        m = ConvModule(3, 4, 1, bias=True, norm_cfg=dict(type="BN"))
    assert m.conv.bias is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning before GN
        ConvModule(3, 4, 1, bias=True, norm_cfg=dict(type="GN", num_groups=2))


def test_forward_matches_torch():
    torch.manual_seed(0)
    m = ConvModule(3, 4, 3, padding=1, norm_cfg=dict(type="BN"), act_cfg=dict(type="ReLU"))
    x = torch.randn(2, 3, 5, 5)
    m.eval()
    expected = F.relu(m.bn(F.conv2d(x, m.conv.weight, None, 1, 1)))
    assert torch.allclose(m(x), expected, atol=1e-6)
    assert torch.allclose(m(x, activate=False), m.bn(m.conv(x)), atol=1e-6)
    assert torch.allclose(m(x, norm=False, activate=False), m.conv(x))


def test_order_places_the_norm_on_the_right_channels():
    m = ConvModule(3, 4, 1, norm_cfg=dict(type="BN"), order=("norm", "conv", "act"))
    assert m.bn.num_features == 3
    m.eval()
    x = torch.randn(2, 3, 4, 4)
    assert torch.allclose(m(x), F.relu(m.conv(m.bn(x))))
    m = ConvModule(3, 4, 1, act_cfg=dict(type="Sigmoid"), order=("act", "conv", "norm"))
    assert torch.allclose(m(x), m.conv(torch.sigmoid(x)))


@pytest.mark.parametrize(
    "order", [["conv", "norm", "act"], ("conv", "norm"), ("conv", "norm", "norm"), ("a", "b", "c")]
)
def test_bad_order_is_an_assertion(order):
    with pytest.raises(AssertionError):
        ConvModule(3, 4, 1, order=order)


@pytest.mark.parametrize("cfg_name", ["conv_cfg", "norm_cfg", "act_cfg"])
def test_cfgs_must_be_dicts(cfg_name):
    with pytest.raises(AssertionError):
        ConvModule(3, 4, 1, **{cfg_name: "BN"})


def test_unknown_types_are_key_errors():
    with pytest.raises(KeyError):
        ConvModule(3, 4, 1, conv_cfg=dict(type="NoConv"))
    with pytest.raises(KeyError):
        ConvModule(3, 4, 1, norm_cfg=dict(type="NoNorm"))
    with pytest.raises(KeyError):
        ConvModule(3, 4, 1, act_cfg=dict(type="NoAct"))
    with pytest.raises(KeyError):
        ConvModule(3, 4, 1, padding_mode="no_pad")


@pytest.mark.parametrize(
    ("mode", "torch_mode"), [("reflect", "reflect"), ("replicate", "replicate")]
)
def test_explicit_padding_modes_pad_before_an_unpadded_conv(mode, torch_mode):
    torch.manual_seed(0)
    m = ConvModule(2, 3, 3, padding=1, padding_mode=mode, act_cfg=None)
    assert type(m.padding_layer).__name__ in ("ReflectionPad2d", "ReplicationPad2d")
    assert m.conv.padding == (0, 0) and m.padding == 1
    x = torch.randn(1, 2, 5, 6)
    expected = F.conv2d(F.pad(x, (1, 1, 1, 1), mode=torch_mode), m.conv.weight, m.conv.bias)
    assert m(x).shape == (1, 3, 5, 6)
    assert torch.allclose(m(x), expected, atol=1e-6)


def test_zeros_and_circular_are_the_convs_own_padding():
    m = ConvModule(2, 3, 3, padding=1)
    assert not m.with_explicit_padding and not hasattr(m, "padding_layer")
    assert m.conv.padding == (1, 1)
    circ = ConvModule(2, 3, 3, padding=1, padding_mode="circular", act_cfg=None)
    assert circ.conv.padding_mode == "circular"
    x = torch.randn(1, 2, 5, 5)
    expected = F.conv2d(F.pad(x, (1, 1, 1, 1), mode="circular"), circ.conv.weight, circ.conv.bias)
    assert torch.allclose(circ(x), expected, atol=1e-6)


def test_spectral_norm_wraps_the_conv():
    m = ConvModule(3, 4, 3, with_spectral_norm=True)
    assert hasattr(m.conv, "weight_orig")
    x = torch.randn(1, 3, 5, 5)
    assert m(x).shape == (1, 4, 3, 3)
    # Each training forward runs a power iteration; then the weight's largest singular value
    # is about 1.
    for _ in range(20):
        m(x)
    sigma = torch.linalg.matrix_norm(m.conv.weight.detach().reshape(4, -1), ord=2)
    assert float(sigma) == pytest.approx(1.0, abs=0.02)


def test_default_init_is_kaiming_fan_out_and_norm_ones():
    torch.manual_seed(3)
    m = ConvModule(3, 8, 3, norm_cfg=dict(type="BN"))
    torch.manual_seed(3)
    ref = nn.Conv2d(3, 8, 3, bias=False)  # same random draws: default init, then Kaiming
    nn.init.kaiming_normal_(ref.weight, a=0, mode="fan_out", nonlinearity="relu")
    assert torch.equal(m.conv.weight, ref.weight)
    assert torch.equal(m.bn.weight, torch.ones(8)) and torch.equal(m.bn.bias, torch.zeros(8))


def test_leaky_relu_init_uses_its_slope_and_the_bias_is_zero():
    torch.manual_seed(4)
    m = ConvModule(3, 8, 3, act_cfg=dict(type="LeakyReLU", negative_slope=0.3))
    torch.manual_seed(4)
    ref = nn.Conv2d(3, 8, 3)
    nn.init.kaiming_normal_(ref.weight, a=0.3, mode="fan_out", nonlinearity="leaky_relu")
    assert torch.equal(m.conv.weight, ref.weight)
    assert torch.equal(m.conv.bias, torch.zeros(8))
    assert m.activate.negative_slope == 0.3 and m.activate.inplace


def test_a_conv_with_its_own_init_weights_keeps_it():
    from mmpar.cnn.bricks import CONV_LAYERS

    @CONV_LAYERS.register_module(name="_TestOwnInitConv")
    class OwnInit(nn.Conv2d):
        def init_weights(self):
            nn.init.constant_(self.weight, 0.5)

    try:
        m = ConvModule(2, 2, 1, conv_cfg=dict(type="_TestOwnInitConv"))
        m.conv.init_weights()
        before = m.conv.weight.clone()
        m.init_weights()  # ConvModule leaves this conv alone
        assert torch.equal(m.conv.weight, before)
    finally:
        CONV_LAYERS.module_dict.pop("_TestOwnInitConv")


@pytest.mark.parametrize("act", ["Tanh", "PReLU", "Sigmoid", "HSigmoid", "Swish", "GELU"])
def test_activations_without_inplace_get_none(act):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = ConvModule(2, 2, 1, act_cfg=dict(type=act))
    assert m(torch.randn(1, 2, 3, 3)).shape == (1, 2, 3, 3)


def test_inplace_false_and_explicit_inplace():
    assert not ConvModule(2, 2, 1, inplace=False).activate.inplace
    assert not ConvModule(2, 2, 1, act_cfg=dict(type="ReLU", inplace=False)).activate.inplace
    assert ConvModule(2, 2, 1, act_cfg=dict(type="HSwish")).activate.inplace


def test_act_cfg_is_not_modified_and_conv_cfg_picks_the_conv():
    act_cfg = dict(type="ReLU")
    m = ConvModule(2, 2, 1, act_cfg=act_cfg, conv_cfg=dict(type="ConvWS"))
    assert act_cfg == dict(type="ReLU")
    assert isinstance(m.conv, ConvWS2d)
    assert isinstance(ConvModule(2, 2, 1, conv_cfg=dict(type="Conv")).conv, Conv2d)
    m3d = ConvModule(2, 2, 1, conv_cfg=dict(type="Conv3d"), norm_cfg=dict(type="BN3d"))
    assert m3d(torch.randn(1, 2, 2, 3, 3)).shape == (1, 2, 2, 3, 3)


def test_no_norm_no_act():
    m = ConvModule(2, 3, 1, act_cfg=None)
    assert not hasattr(m, "activate") and not m.with_activation
    x = torch.randn(1, 2, 3, 3)
    assert torch.equal(m(x), m.conv(x))


def test_built_as_a_plugin():
    name, layer = build_plugin_layer(
        dict(type="ConvModule", kernel_size=1), postfix=1, in_channels=2, out_channels=3
    )
    assert name == "conv_block1" and isinstance(layer, ConvModule)


def test_depthwise_separable_keys_groups_and_cfgs():
    m = DepthwiseSeparableConvModule(4, 6, 3, padding=1, norm_cfg=dict(type="BN"))
    assert _keys(m) == [
        "depthwise_conv.conv.weight",
        "depthwise_conv.bn.weight",
        "depthwise_conv.bn.bias",
        "depthwise_conv.bn.running_mean",
        "depthwise_conv.bn.running_var",
        "depthwise_conv.bn.num_batches_tracked",
        "pointwise_conv.conv.weight",
        "pointwise_conv.bn.weight",
        "pointwise_conv.bn.bias",
        "pointwise_conv.bn.running_mean",
        "pointwise_conv.bn.running_var",
        "pointwise_conv.bn.num_batches_tracked",
    ]
    assert m.depthwise_conv.conv.groups == 4 and m.depthwise_conv.conv.weight.shape == (4, 1, 3, 3)
    assert m.pointwise_conv.conv.weight.shape == (6, 4, 1, 1)
    x = torch.randn(2, 4, 5, 5)
    assert m(x).shape == (2, 6, 5, 5)
    m.eval()
    assert torch.equal(m(x), m.pointwise_conv(m.depthwise_conv(x)))

    split = DepthwiseSeparableConvModule(
        4, 6, 3, dw_norm_cfg=None, dw_act_cfg=None, pw_act_cfg=dict(type="Tanh"),
        norm_cfg=dict(type="GN", num_groups=2),
    )  # fmt: skip
    assert not split.depthwise_conv.with_norm and not split.depthwise_conv.with_activation
    assert split.pointwise_conv.norm_name == "gn"
    assert isinstance(split.pointwise_conv.activate, nn.Tanh)
    shared = DepthwiseSeparableConvModule(4, 6, 3, padding_mode="reflect", padding=1)
    assert (
        shared.depthwise_conv.with_explicit_padding and shared.pointwise_conv.with_explicit_padding
    )
    with pytest.raises(AssertionError):
        DepthwiseSeparableConvModule(4, 6, 3, groups=2)
