"""Upsampling layers: ``'nearest'``, ``'bilinear'``, ``'pixel_shuffle'`` (and ``'deconv'``)."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from mmpar.runner.model_setup.weight_init import xavier_init

from ._cfg import split_layer_cfg
from .registry import UPSAMPLE_LAYERS

UPSAMPLE_LAYERS.register_module("nearest", module=nn.Upsample)
UPSAMPLE_LAYERS.register_module("bilinear", module=nn.Upsample)


@UPSAMPLE_LAYERS.register_module(name="pixel_shuffle")
class PixelShufflePack(nn.Module):
    """A conv to ``out_channels * scale_factor²`` channels followed by ``F.pixel_shuffle``.

    Args:
        in_channels: Input channels.
        out_channels: Output channels.
        scale_factor: Upsampling ratio.
        upsample_kernel: Kernel size of the conv (padded to keep the size).
    """

    def __init__(
        self, in_channels: int, out_channels: int, scale_factor: int, upsample_kernel: int
    ) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.scale_factor = scale_factor
        self.upsample_kernel = upsample_kernel
        self.upsample_conv = nn.Conv2d(
            in_channels,
            out_channels * scale_factor * scale_factor,
            upsample_kernel,
            padding=(upsample_kernel - 1) // 2,
        )
        self.init_weights()

    def init_weights(self) -> None:
        """Xavier-uniform weights and zero bias for the conv."""
        xavier_init(self.upsample_conv, distribution="uniform")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return ``x`` upsampled by ``scale_factor``."""
        return F.pixel_shuffle(self.upsample_conv(x), self.scale_factor)


def build_upsample_layer(cfg: dict, *args: Any, **kwargs: Any) -> nn.Module:
    """Build an upsampling layer: ``UPSAMPLE_LAYERS[cfg['type']](*args, **kwargs, **rest)``.

    For ``'nearest'`` and ``'bilinear'`` (``nn.Upsample``), the type is the ``mode`` and
    ``scale_factor`` comes from ``cfg``; ``'deconv'`` takes the conv's arguments.

    Raises:
        TypeError: ``cfg`` is not a dict.
        KeyError: ``cfg`` has no ``type`` or names an unregistered one.
    """
    upsample_cls, cfg_args = split_layer_cfg(cfg, UPSAMPLE_LAYERS, "upsample")
    if upsample_cls is nn.Upsample:
        cfg_args["mode"] = cfg["type"]
    return upsample_cls(*args, **kwargs, **cfg_args)


__all__ = ["PixelShufflePack", "build_upsample_layer"]
