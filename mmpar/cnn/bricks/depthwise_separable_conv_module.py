""":class:`DepthwiseSeparableConvModule`: a depthwise then a pointwise :class:`ConvModule`."""

from __future__ import annotations

from typing import Any, Union

import torch
from torch import nn

from ..types import IntPair
from .conv_module import ConvModule


class DepthwiseSeparableConvModule(nn.Module):
    """Depthwise separable convolution (MobileNet): ``depthwise_conv`` then ``pointwise_conv``.

    ``depthwise_conv`` is a ConvModule with ``groups=in_channels`` and the given kernel;
    ``pointwise_conv`` a 1x1 ConvModule to ``out_channels``. Each has a norm and an activation
    when configured.

    Args:
        in_channels: Input channels.
        out_channels: Output channels.
        kernel_size: Kernel size of the depthwise conv.
        stride: Stride of the depthwise conv. Default: 1.
        padding: Padding of the depthwise conv. Default: 0.
        dilation: Dilation of the depthwise conv. Default: 1.
        norm_cfg: Norm config of both blocks. Default: None.
        act_cfg: Activation config of both blocks. Default: ReLU.
        dw_norm_cfg: Norm config of the depthwise block; ``'default'``: ``norm_cfg``.
        dw_act_cfg: Activation config of the depthwise block; ``'default'``: ``act_cfg``.
        pw_norm_cfg: Norm config of the pointwise block; ``'default'``: ``norm_cfg``.
        pw_act_cfg: Activation config of the pointwise block; ``'default'``: ``act_cfg``.
        **kwargs: Other :class:`ConvModule` arguments, given to both blocks.

    Raises:
        AssertionError: ``groups`` is among ``kwargs``.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: IntPair,
        stride: IntPair = 1,
        padding: IntPair = 0,
        dilation: IntPair = 1,
        norm_cfg: dict | None = None,
        act_cfg: dict = dict(type="ReLU"),  # noqa: B006 (mmcv's default; read-only)
        dw_norm_cfg: Union[dict, str] = "default",
        dw_act_cfg: Union[dict, str] = "default",
        pw_norm_cfg: Union[dict, str] = "default",
        pw_act_cfg: Union[dict, str] = "default",
        **kwargs: Any,
    ) -> None:
        super().__init__()
        assert "groups" not in kwargs, "groups should not be specified"
        dw_norm_cfg = norm_cfg if dw_norm_cfg == "default" else dw_norm_cfg
        dw_act_cfg = act_cfg if dw_act_cfg == "default" else dw_act_cfg
        pw_norm_cfg = norm_cfg if pw_norm_cfg == "default" else pw_norm_cfg
        pw_act_cfg = act_cfg if pw_act_cfg == "default" else pw_act_cfg
        self.depthwise_conv = ConvModule(
            in_channels,
            in_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            dilation=dilation,
            groups=in_channels,
            norm_cfg=dw_norm_cfg,
            act_cfg=dw_act_cfg,
            **kwargs,
        )
        self.pointwise_conv = ConvModule(
            in_channels, out_channels, 1, norm_cfg=pw_norm_cfg, act_cfg=pw_act_cfg, **kwargs
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply the depthwise block, then the pointwise block."""
        return self.pointwise_conv(self.depthwise_conv(x))


__all__ = ["DepthwiseSeparableConvModule"]
