"""mmpar.cnn.bricks: mmcv 1.x's ``mmcv.cnn.bricks`` (layers, their registries and builders).

Importing this package imports every brick module, so every layer is registered.
"""

from .activation import build_activation_layer
from .conv import build_conv_layer
from .drop import Dropout, DropPath, build_dropout
from .norm import build_norm_layer, is_norm
from .padding import build_padding_layer
from .registry import (
    ACTIVATION_LAYERS,
    ATTENTION,
    CONV_LAYERS,
    DROPOUT_LAYERS,
    FEEDFORWARD_NETWORK,
    NORM_LAYERS,
    PADDING_LAYERS,
    PLUGIN_LAYERS,
    POSITIONAL_ENCODING,
    TRANSFORMER_LAYER,
    TRANSFORMER_LAYER_SEQUENCE,
    UPSAMPLE_LAYERS,
)

# --- transformer.py (branch cnn_rest) adds its import line here ---

__all__ = [
    "ACTIVATION_LAYERS",
    "ATTENTION",
    "CONV_LAYERS",
    "DROPOUT_LAYERS",
    "FEEDFORWARD_NETWORK",
    "NORM_LAYERS",
    "PADDING_LAYERS",
    "PLUGIN_LAYERS",
    "POSITIONAL_ENCODING",
    "TRANSFORMER_LAYER",
    "TRANSFORMER_LAYER_SEQUENCE",
    "UPSAMPLE_LAYERS",
    "DropPath",
    "Dropout",
    "build_activation_layer",
    "build_conv_layer",
    "build_dropout",
    "build_norm_layer",
    "build_padding_layer",
    "is_norm",
]
