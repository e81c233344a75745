"""TensorFlow's ``padding='SAME'`` convolution (:class:`Conv2dAdaptivePadding`)."""

from __future__ import annotations

import math
from typing import Union

import torch
import torch.nn.functional as F
from torch import nn

from .registry import CONV_LAYERS


def _same_padding(size: int, kernel: int, stride: int, dilation: int) -> int:
    """Total padding so that ``ceil(size / stride)`` outputs cover the whole input."""
    out = math.ceil(size / stride)
    return max((out - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)


@CONV_LAYERS.register_module()
class Conv2dAdaptivePadding(nn.Conv2d):
    """A 2-D convolution that pads its input like TensorFlow's ``'SAME'`` padding.

    The input is zero-padded at run time (the odd pixel at the bottom/right) so that the
    output has ``ceil(input / stride)`` rows and columns; the ``padding`` argument is accepted
    for ``nn.Conv2d``'s signature and ignored (the layer's own padding is 0).

    Args:
        in_channels: Input channels.
        out_channels: Output channels.
        kernel_size: Kernel size.
        stride: Stride. Default: 1.
        padding: Ignored. Default: 0.
        dilation: Dilation. Default: 1.
        groups: Groups. Default: 1.
        bias: Learn a bias. Default: True.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Union[int, tuple[int, int]],
        stride: Union[int, tuple[int, int]] = 1,
        padding: Union[int, tuple[int, int]] = 0,
        dilation: Union[int, tuple[int, int]] = 1,
        groups: int = 1,
        bias: bool = True,
    ) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, 0, dilation, groups, bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Pad ``x`` to cover every position, then convolve."""
        img_h, img_w = x.shape[-2:]
        kernel_h, kernel_w = self.weight.shape[-2:]
        pad_h = _same_padding(img_h, kernel_h, self.stride[0], self.dilation[0])
        pad_w = _same_padding(img_w, kernel_w, self.stride[1], self.dilation[1])
        if pad_h > 0 or pad_w > 0:
            x = F.pad(x, [pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2])
        return self._conv_forward(x, self.weight, self.bias)


__all__ = ["Conv2dAdaptivePadding"]
