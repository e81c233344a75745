"""mmcv.ops.saconv: ``SAConv2d`` (``'SAC'`` in ``CONV_LAYERS``) is not provided yet.

Registered under mmcv's name so configs naming it fail when the layer is built, saying what
to use instead.
"""

from __future__ import annotations

from mmpar.cnn import CONV_LAYERS, ConvAWS2d

from ._unsupported import SAC, unsupported_class

__all__ = ["SAConv2d"]

SAConv2d = CONV_LAYERS.register_module(
    name="SAC", module=unsupported_class("SAConv2d", SAC, __name__, base=ConvAWS2d)
)
