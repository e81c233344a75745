"""mmpar.cnn.bricks: mmcv 1.x's ``mmcv.cnn.bricks`` (layers, their registries and builders).

Importing this package imports every brick module, so every layer is registered.
"""

from . import registry
from .activation import build_activation_layer
from .context_block import ContextBlock
from .conv import build_conv_layer
from .conv2d_adaptive_padding import Conv2dAdaptivePadding
from .conv_module import ConvModule
from .conv_ws import ConvAWS2d, ConvWS2d, conv_ws_2d
from .depthwise_separable_conv_module import DepthwiseSeparableConvModule
from .drop import Dropout, DropPath, build_dropout
from .generalized_attention import GeneralizedAttention
from .hsigmoid import HSigmoid
from .hswish import HSwish
from .non_local import NonLocal1d, NonLocal2d, NonLocal3d
from .norm import build_norm_layer, is_norm
from .padding import build_padding_layer
from .plugin import build_plugin_layer
from .registry import *  # noqa: F403 (every registry; their names come from registry.__all__)
from .scale import Scale
from .swish import Swish
from .transformer import (
    FFN,
    AdaptivePadding,
    BaseTransformerLayer,
    MultiheadAttention,
    PatchEmbed,
    PatchMerging,
    TransformerLayerSequence,
    build_attention,
    build_feedforward_network,
    build_positional_encoding,
    build_transformer_layer,
    build_transformer_layer_sequence,
)
from .upsample import PixelShufflePack, build_upsample_layer
from .wrappers import (
    Conv2d,
    Conv3d,
    ConvTranspose2d,
    ConvTranspose3d,
    Linear,
    MaxPool2d,
    MaxPool3d,
)

# The registries are listed once, in registry.py.
__all__ = [
    *registry.__all__,
    "FFN",
    "AdaptivePadding",
    "BaseTransformerLayer",
    "ContextBlock",
    "Conv2d",
    "Conv2dAdaptivePadding",
    "Conv3d",
    "ConvAWS2d",
    "ConvModule",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "ConvWS2d",
    "DepthwiseSeparableConvModule",
    "DropPath",
    "Dropout",
    "GeneralizedAttention",
    "HSigmoid",
    "HSwish",
    "Linear",
    "MaxPool2d",
    "MaxPool3d",
    "MultiheadAttention",
    "NonLocal1d",
    "NonLocal2d",
    "NonLocal3d",
    "PatchEmbed",
    "PatchMerging",
    "PixelShufflePack",
    "Scale",
    "Swish",
    "TransformerLayerSequence",
    "build_activation_layer",
    "build_attention",
    "build_conv_layer",
    "build_dropout",
    "build_feedforward_network",
    "build_norm_layer",
    "build_padding_layer",
    "build_plugin_layer",
    "build_positional_encoding",
    "build_transformer_layer",
    "build_transformer_layer_sequence",
    "build_upsample_layer",
    "conv_ws_2d",
    "is_norm",
]
