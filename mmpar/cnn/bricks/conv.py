"""Convolution layers: torch's convolutions in ``CONV_LAYERS`` and :func:`build_conv_layer`.

``'Conv'`` and ``'Conv3d'`` are replaced by the classes of :mod:`.wrappers` when that module is
imported (as in mmcv), so a built ``'Conv'`` is :class:`mmpar.cnn.bricks.wrappers.Conv2d`.
"""

from __future__ import annotations

from typing import Any

from torch import nn

from ._cfg import split_layer_cfg
from .registry import CONV_LAYERS

CONV_LAYERS.register_module("Conv1d", module=nn.Conv1d)
CONV_LAYERS.register_module("Conv2d", module=nn.Conv2d)
CONV_LAYERS.register_module("Conv3d", module=nn.Conv3d)
CONV_LAYERS.register_module("Conv", module=nn.Conv2d)


def build_conv_layer(cfg: dict | None, *args: Any, **kwargs: Any) -> nn.Module:
    """Build a convolution layer: ``CONV_LAYERS[cfg['type']](*args, **kwargs, **rest of cfg)``.

    Args:
        cfg: The layer config, or None for ``dict(type='Conv2d')``.
        *args: Positional arguments of the layer (``in_channels, out_channels, kernel_size``).
        **kwargs: Keyword arguments of the layer.

    Raises:
        TypeError: ``cfg`` is neither None nor a dict.
        KeyError: ``cfg`` has no ``type`` or names an unregistered one.
    """
    conv_cls, cfg_args = split_layer_cfg(
        dict(type="Conv2d") if cfg is None else cfg, CONV_LAYERS, "layer"
    )
    return conv_cls(*args, **kwargs, **cfg_args)


__all__ = ["CONV_LAYERS", "build_conv_layer"]
