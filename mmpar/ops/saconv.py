"""Switchable atrous convolution (DetectoRS, https://arxiv.org/abs/2006.02334): ``'SAC'``.

Two weight-standardised 3x3 convolutions share one weight: a small-field one (the layer's
dilation) and a large-field one (three times the dilation and padding, weight +
``weight_diff``). A per-pixel ``switch`` (a 1x1 conv of the 5x5-averaged input) mixes them, and
global context is added before and after. With ``use_deform`` both branches are deformable
(offsets from ``offset_s`` / ``offset_l``). Parameter names and initialisation are mmcv's, so its
checkpoints load; as in mmcv, the layer's ``bias`` (present when ``bias=True``) is not added.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.modules.utils import _pair

from mmpar.cnn import CONV_LAYERS, ConvAWS2d, constant_init
from mmpar.cnn.types import IntPair

# mmcv's module has these names too (from mmcv.utils).
from mmpar.utils import TORCH_VERSION, digit_version

from .deform_conv import deform_conv2d

__all__ = ["TORCH_VERSION", "SAConv2d", "digit_version"]


@CONV_LAYERS.register_module(name="SAC")
class SAConv2d(ConvAWS2d):
    """Switchable atrous convolution.

    Args:
        in_channels: Input channels.
        out_channels: Output channels.
        kernel_size: Kernel size (3 with ``use_deform``: the offset convs predict 3x3 offsets).
        stride: Stride.
        padding: Padding of the small-field branch (the large one uses three times it).
        dilation: Dilation of the small-field branch (the large one uses three times it).
        groups: Convolution groups.
        bias: Create mmcv's ``bias`` parameter (unused in the output, as in mmcv).
        use_deform: Deformable branches.

    Raises:
        RuntimeError: At ``forward``, ``x`` does not have ``in_channels`` channels (torch's
            convolution names the shapes).
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
        use_deform: bool = False,
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
        self.use_deform = use_deform
        self.switch = nn.Conv2d(self.in_channels, 1, kernel_size=1, stride=stride, bias=True)
        self.weight_diff = nn.Parameter(torch.empty_like(self.weight))
        self.pre_context = nn.Conv2d(self.in_channels, self.in_channels, kernel_size=1, bias=True)
        self.post_context = nn.Conv2d(
            self.out_channels, self.out_channels, kernel_size=1, bias=True
        )
        if self.use_deform:
            self.offset_s = nn.Conv2d(self.in_channels, 18, 3, padding=1, stride=stride)
            self.offset_l = nn.Conv2d(self.in_channels, 18, 3, padding=1, stride=stride)
        self.init_weights()

    def init_weights(self) -> None:
        """Start as the small-field branch alone: switch 1, no context, zero offsets and diff."""
        constant_init(self.switch, 0, bias=1)
        self.weight_diff.data.zero_()
        constant_init(self.pre_context, 0)
        constant_init(self.post_context, 0)
        if self.use_deform:
            constant_init(self.offset_s, 0)
            constant_init(self.offset_l, 0)

    def _branch(
        self, x: Tensor, avg_x: Tensor, weight: Tensor, scale: int, offset_conv: nn.Module | None
    ) -> Tensor:
        padding = tuple(scale * p for p in _pair(self.padding))
        dilation = tuple(scale * d for d in _pair(self.dilation))
        if offset_conv is None:
            return F.conv2d(x, weight, None, self.stride, padding, dilation, self.groups)
        offset = offset_conv(avg_x)
        return deform_conv2d(x, offset, weight, self.stride, padding, dilation, self.groups, 1)

    def forward(self, x: Tensor) -> Tensor:
        """Mix the small- and large-field convolutions of ``x`` by the learned switch.

        Args:
            x: ``(N, C_in, H, W)``.

        Returns:
            ``(N, C_out, H_out, W_out)``.
        """
        x = x + self.pre_context(F.adaptive_avg_pool2d(x, 1))
        avg_x = F.avg_pool2d(F.pad(x, (2, 2, 2, 2), mode="reflect"), kernel_size=5, stride=1)
        switch = self.switch(avg_x)
        weight = self._get_weight(self.weight)
        small = self._branch(x, avg_x, weight, 1, self.offset_s if self.use_deform else None)
        large = self._branch(
            x, avg_x, weight + self.weight_diff, 3, self.offset_l if self.use_deform else None
        )
        out = switch * small + (1 - switch) * large
        return out + self.post_context(F.adaptive_avg_pool2d(out, 1))
