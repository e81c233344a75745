"""The layer registries of mmcv 1.x's ``mmcv.cnn.bricks.registry`` (same names and titles).

Each brick module registers its layers into these at import; importing
:mod:`mmpar.cnn.bricks` imports them all, so a registry is complete once this module is
importable.
"""

from __future__ import annotations

from mmpar.utils.registry import Registry

CONV_LAYERS = Registry("conv layer")
NORM_LAYERS = Registry("norm layer")
ACTIVATION_LAYERS = Registry("activation layer")
PADDING_LAYERS = Registry("padding layer")
UPSAMPLE_LAYERS = Registry("upsample layer")
PLUGIN_LAYERS = Registry("plugin layer")

DROPOUT_LAYERS = Registry("drop out layers")
POSITIONAL_ENCODING = Registry("position encoding")
ATTENTION = Registry("attention")
FEEDFORWARD_NETWORK = Registry("feed-forward Network")
TRANSFORMER_LAYER = Registry("transformerLayer")
TRANSFORMER_LAYER_SEQUENCE = Registry("transformer-layers sequence")

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
]
