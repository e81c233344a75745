"""The layer registries hold what mmcv 1.7.2 registers, under the same names and titles."""

import pytest
import torch
from torch import nn

from mmpar.cnn.bricks import (
    conv_ws,
    registry,
    upsample,
    wrappers,
)
from mmpar.cnn.bricks.activation import Clamp
from mmpar.cnn.bricks.context_block import ContextBlock
from mmpar.cnn.bricks.conv2d_adaptive_padding import Conv2dAdaptivePadding
from mmpar.cnn.bricks.conv_module import ConvModule
from mmpar.cnn.bricks.drop import Dropout, DropPath
from mmpar.cnn.bricks.generalized_attention import GeneralizedAttention
from mmpar.cnn.bricks.hsigmoid import HSigmoid
from mmpar.cnn.bricks.non_local import NonLocal2d
from mmpar.cnn.bricks.swish import Swish
from mmpar.utils import Registry

# Registry titles, as mmcv names them (they appear in error messages).
TITLES = {
    "CONV_LAYERS": "conv layer",
    "NORM_LAYERS": "norm layer",
    "ACTIVATION_LAYERS": "activation layer",
    "PADDING_LAYERS": "padding layer",
    "UPSAMPLE_LAYERS": "upsample layer",
    "PLUGIN_LAYERS": "plugin layer",
    "DROPOUT_LAYERS": "drop out layers",
    "POSITIONAL_ENCODING": "position encoding",
    "ATTENTION": "attention",
    "FEEDFORWARD_NETWORK": "feed-forward Network",
    "TRANSFORMER_LAYER": "transformerLayer",
    "TRANSFORMER_LAYER_SEQUENCE": "transformer-layers sequence",
}

# What mmcv 1.7.2's bricks register on torch >= 1.7 (mmcv.ops adds more; not here).
EXPECTED = {
    "CONV_LAYERS": {
        "Conv1d": nn.Conv1d,
        "Conv2d": nn.Conv2d,
        "Conv3d": wrappers.Conv3d,
        "Conv": wrappers.Conv2d,
        "ConvTranspose2d": wrappers.ConvTranspose2d,
        "deconv": wrappers.ConvTranspose2d,
        "ConvTranspose3d": wrappers.ConvTranspose3d,
        "deconv3d": wrappers.ConvTranspose3d,
        "ConvWS": conv_ws.ConvWS2d,
        "ConvAWS": conv_ws.ConvAWS2d,
        "Conv2dAdaptivePadding": Conv2dAdaptivePadding,
    },
    "NORM_LAYERS": {
        "BN": nn.BatchNorm2d,
        "BN1d": nn.BatchNorm1d,
        "BN2d": nn.BatchNorm2d,
        "BN3d": nn.BatchNorm3d,
        "SyncBN": nn.SyncBatchNorm,
        "GN": nn.GroupNorm,
        "LN": nn.LayerNorm,
        "IN": nn.InstanceNorm2d,
        "IN1d": nn.InstanceNorm1d,
        "IN2d": nn.InstanceNorm2d,
        "IN3d": nn.InstanceNorm3d,
    },
    "ACTIVATION_LAYERS": {
        "ReLU": nn.ReLU,
        "LeakyReLU": nn.LeakyReLU,
        "PReLU": nn.PReLU,
        "RReLU": nn.RReLU,
        "ReLU6": nn.ReLU6,
        "ELU": nn.ELU,
        "Sigmoid": nn.Sigmoid,
        "Tanh": nn.Tanh,
        "SiLU": nn.SiLU,
        "GELU": nn.GELU,
        "Clamp": Clamp,
        "Clip": Clamp,
        "HSigmoid": HSigmoid,
        "HSwish": nn.Hardswish,
        "Swish": Swish,
    },
    "PADDING_LAYERS": {
        "zero": nn.ZeroPad2d,
        "reflect": nn.ReflectionPad2d,
        "replicate": nn.ReplicationPad2d,
    },
    "UPSAMPLE_LAYERS": {
        "nearest": nn.Upsample,
        "bilinear": nn.Upsample,
        "pixel_shuffle": upsample.PixelShufflePack,
        "deconv": wrappers.ConvTranspose2d,
        "deconv3d": wrappers.ConvTranspose3d,
    },
    "PLUGIN_LAYERS": {
        "ConvModule": ConvModule,
        "ContextBlock": ContextBlock,
        "GeneralizedAttention": GeneralizedAttention,
        "NonLocal2d": NonLocal2d,
    },
    "DROPOUT_LAYERS": {"DropPath": DropPath, "Dropout": Dropout},
}


@pytest.mark.parametrize("name", sorted(TITLES))
def test_registries_are_registries_with_mmcvs_titles(name):
    reg = getattr(registry, name)
    assert isinstance(reg, Registry)
    assert reg.name == TITLES[name]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_registry_contents(name):
    # Exactly these entries (the transformer registries are filled by transformer.py). Entries
    # mmpar.ops adds when another test imported it are checked in tests/test_ops.
    entries = getattr(registry, name).module_dict
    own = {k: v for k, v in entries.items() if not v.__module__.startswith("mmpar.ops.")}
    assert own == EXPECTED[name]


def test_the_package_exports_the_registries_and_mmcvs_names():
    import mmpar.cnn.bricks as bricks

    mmcv_all = """ConvModule build_activation_layer build_conv_layer build_norm_layer
    build_padding_layer build_upsample_layer build_plugin_layer is_norm HSigmoid HSwish
    NonLocal1d NonLocal2d NonLocal3d ContextBlock GeneralizedAttention ACTIVATION_LAYERS
    CONV_LAYERS NORM_LAYERS PADDING_LAYERS UPSAMPLE_LAYERS PLUGIN_LAYERS Scale ConvAWS2d
    ConvWS2d conv_ws_2d DepthwiseSeparableConvModule Swish Linear Conv2dAdaptivePadding Conv2d
    ConvTranspose2d MaxPool2d ConvTranspose3d MaxPool3d Conv3d Dropout DropPath""".split()
    assert set(mmcv_all) <= set(bricks.__all__)
    for name in bricks.__all__:
        assert hasattr(bricks, name), name
    assert bricks.CONV_LAYERS is registry.CONV_LAYERS


def test_a_registered_name_cannot_be_taken_twice():
    # A KeyError as in mmcv, unless force=True (how wrappers replace 'Conv').
    with pytest.raises(KeyError):
        registry.NORM_LAYERS.register_module("BN", module=nn.BatchNorm1d)
    assert registry.NORM_LAYERS.get("BN") is nn.BatchNorm2d


def test_builders_use_registrations_made_by_users():
    @registry.ACTIVATION_LAYERS.register_module(name="_TestDouble")
    class Double(nn.Module):
        def forward(self, x):
            return x * 2

    try:
        from mmpar.cnn.bricks import build_activation_layer

        assert torch.equal(
            build_activation_layer(dict(type="_TestDouble"))(torch.ones(2)), 2 * torch.ones(2)
        )
    finally:
        registry.ACTIVATION_LAYERS.module_dict.pop("_TestDouble")
