"""Padding layers: ``'zero'``, ``'reflect'``, ``'replicate'`` and :func:`build_padding_layer`."""

from __future__ import annotations

from typing import Any

from torch import nn

from ._cfg import split_layer_cfg
from .registry import PADDING_LAYERS

PADDING_LAYERS.register_module("zero", module=nn.ZeroPad2d)
PADDING_LAYERS.register_module("reflect", module=nn.ReflectionPad2d)
PADDING_LAYERS.register_module("replicate", module=nn.ReplicationPad2d)


def build_padding_layer(cfg: dict, *args: Any, **kwargs: Any) -> nn.Module:
    """Build a padding layer: ``PADDING_LAYERS[cfg['type']](*args, **kwargs, **rest of cfg)``.

    Raises:
        TypeError: ``cfg`` is not a dict.
        KeyError: ``cfg`` has no ``type`` or names an unregistered one.
    """
    pad_cls, cfg_args = split_layer_cfg(cfg, PADDING_LAYERS, "padding")
    return pad_cls(*args, **kwargs, **cfg_args)


__all__ = ["PADDING_LAYERS", "build_padding_layer"]
