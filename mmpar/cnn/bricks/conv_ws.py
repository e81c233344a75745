"""Weight-standardised convolutions: :func:`conv_ws_2d`, :class:`ConvWS2d`, :class:`ConvAWS2d`.

Weight Standardization (Qiao et al., 2019) normalises each output filter of the kernel to zero
mean and unit standard deviation before convolving; the adaptive variant of DetectoRS then
rescales it by the buffers ``weight_gamma`` and ``weight_beta``.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ..types import IntPair
from .registry import CONV_LAYERS


def _per_filter(weight: torch.Tensor) -> torch.Tensor:
    # One row per output filter, shaped to broadcast back over the kernel.
    return weight.reshape(weight.size(0), -1)


def _as_kernel_stat(stat: torch.Tensor) -> torch.Tensor:
    return stat.reshape(-1, 1, 1, 1)


def _standardise(weight: torch.Tensor, eps: float) -> torch.Tensor:
    flat = _per_filter(weight)
    mean = _as_kernel_stat(flat.mean(dim=1))
    std = _as_kernel_stat(flat.std(dim=1))
    return (weight - mean) / (std + eps)


def conv_ws_2d(
    input: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None = None,
    stride: IntPair = 1,
    padding: IntPair = 0,
    dilation: IntPair = 1,
    groups: int = 1,
    eps: float = 1e-5,
) -> torch.Tensor:
    """``F.conv2d`` with each filter of ``weight`` standardised: ``(w - mean) / (std + eps)``.

    ``std`` is the unbiased standard deviation over the filter's elements, as in mmcv.
    """
    return F.conv2d(input, _standardise(weight, eps), bias, stride, padding, dilation, groups)


@CONV_LAYERS.register_module("ConvWS")
class ConvWS2d(nn.Conv2d):
    """``nn.Conv2d`` whose kernel is weight-standardised on every forward (:func:`conv_ws_2d`).

    Args:
        in_channels: Input channels.
        out_channels: Output channels.
        kernel_size: Kernel size.
        stride: Stride. Default: 1.
        padding: Zero padding. Default: 0.
        dilation: Dilation. Default: 1.
        groups: Groups. Default: 1.
        bias: Learn a bias. Default: True.
        eps: Added to the standard deviation. Default: 1e-5.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: IntPair,
        stride: IntPair = 1,
        padding: IntPair = 0,
        dilation: IntPair = 1,
        groups: int = 1,
        bias: bool = True,
        eps: float = 1e-5,
    ) -> None:
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            dilation=dilation,
            groups=groups,
            bias=bias,
        )
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Convolve ``x`` with the standardised kernel."""
        # nn.Conv2d's own call with this layer's stride/padding/dilation/groups.
        return self._conv_forward(x, _standardise(self.weight, self.eps), self.bias)


def _filter_mean_std(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # AWS's statistics: sqrt(var + 1e-5) rather than std + eps, as mmcv computes them.
    flat = _per_filter(weight)
    return _as_kernel_stat(flat.mean(dim=1)), _as_kernel_stat(torch.sqrt(flat.var(dim=1) + 1e-5))


@CONV_LAYERS.register_module(name="ConvAWS")
class ConvAWS2d(nn.Conv2d):
    """Adaptive Weight Standardization (DetectoRS): ``gamma * standardise(w) + beta``.

    ``weight_gamma`` (ones) and ``weight_beta`` (zeros), shaped ``(out_channels, 1, 1, 1)``, are
    buffers. Loading a checkpoint without them (a plain conv's weights) sets them to the
    per-filter std and mean of the loaded weight, so the layer starts out computing the same
    convolution as the checkpoint's conv, and they are not reported missing.

    Arguments as :class:`ConvWS2d`, without ``eps``.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: IntPair,
        stride: IntPair = 1,
        padding: IntPair = 0,
        dilation: IntPair = 1,
        groups: int = 1,
        bias: bool = True,
    ) -> None:
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            dilation=dilation,
            groups=groups,
            bias=bias,
        )
        self.register_buffer("weight_gamma", torch.ones(self.out_channels, 1, 1, 1))
        self.register_buffer("weight_beta", torch.zeros(self.out_channels, 1, 1, 1))

    def _get_weight(self, weight: torch.Tensor) -> torch.Tensor:
        mean, std = _filter_mean_std(weight)
        return self.weight_gamma * ((weight - mean) / std) + self.weight_beta

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Convolve ``x`` with the adaptively standardised kernel."""
        return self._conv_forward(x, self._get_weight(self.weight), self.bias)

    def _load_from_state_dict(
        self,
        state_dict: OrderedDict,
        prefix: str,
        local_metadata: dict,
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        # A negative gamma after loading means the checkpoint had none (gamma is a std, > 0).
        self.weight_gamma.data.fill_(-1)
        own_missing: list[Any] = []
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, own_missing, unexpected_keys, error_msgs
        )
        if self.weight_gamma.data.mean() <= 0:
            mean, std = _filter_mean_std(self.weight.data)
            self.weight_beta.data.copy_(mean)
            self.weight_gamma.data.copy_(std)
            own_missing = [
                k for k in own_missing if not k.endswith(("weight_gamma", "weight_beta"))
            ]
        missing_keys.extend(own_missing)


__all__ = ["ConvAWS2d", "ConvWS2d", "conv_ws_2d"]
