"""mmcv 1.x's ``mmcv.ops.merge_cells``: the two-input merge cells of NAS-FPN and NAS-FCOS."""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from mmpar.cnn.bricks.conv_module import ConvModule

__all__ = ["BaseMergeCell", "ConcatCell", "GlobalPoolingCell", "SumCell"]


class BaseMergeCell(nn.Module):
    """Merge two feature maps: optional input convs, resize both, a binary op, an output conv.

    Args:
        fused_channels: Input channels of ``out_conv``. Default: 256.
        out_channels: Output channels of ``out_conv`` (and channels of the input convs).
            Default: 256.
        with_out_conv: Whether to apply ``out_conv`` after the binary op. Default: True.
        out_conv_cfg: Keyword arguments of ``out_conv``'s :class:`ConvModule` (``groups``,
            ``kernel_size``, ``padding``, ``bias``). Default: a 3x3 conv with bias.
        out_norm_cfg: Norm config of ``out_conv``. Default: None.
        out_conv_order: Layer order of ``out_conv``. Default: ``('act', 'conv', 'norm')``.
        with_input1_conv: Whether to apply a 3x3 :class:`ConvModule` to the first input.
        with_input2_conv: Whether to apply a 3x3 :class:`ConvModule` to the second input.
        input_conv_cfg: Conv config of the input convs. Default: None (``Conv2d``).
        input_norm_cfg: Norm config of the input convs. Default: None.
        upsample_mode: ``'nearest'`` or ``'bilinear'``, to enlarge an input. Default:
            ``'nearest'``.
    """

    def __init__(
        self,
        fused_channels: int | None = 256,
        out_channels: int | None = 256,
        with_out_conv: bool = True,
        out_conv_cfg: dict | None = None,
        out_norm_cfg: dict | None = None,
        out_conv_order: tuple = ("act", "conv", "norm"),
        with_input1_conv: bool = False,
        with_input2_conv: bool = False,
        input_conv_cfg: dict | None = None,
        input_norm_cfg: dict | None = None,
        upsample_mode: str = "nearest",
    ) -> None:
        super().__init__()
        assert upsample_mode in ["nearest", "bilinear"], (
            f"upsample_mode must be 'nearest' or 'bilinear', got {upsample_mode!r}"
        )
        if out_conv_cfg is None:
            out_conv_cfg = dict(groups=1, kernel_size=3, padding=1, bias=True)
        self.with_out_conv = with_out_conv
        self.with_input1_conv = with_input1_conv
        self.with_input2_conv = with_input2_conv
        self.upsample_mode = upsample_mode
        if with_out_conv:
            self.out_conv = ConvModule(
                fused_channels,
                out_channels,
                **out_conv_cfg,
                norm_cfg=out_norm_cfg,
                order=out_conv_order,
            )
        self.input1_conv = (
            self._build_input_conv(out_channels, input_conv_cfg, input_norm_cfg)
            if with_input1_conv
            else nn.Sequential()
        )
        self.input2_conv = (
            self._build_input_conv(out_channels, input_conv_cfg, input_norm_cfg)
            if with_input2_conv
            else nn.Sequential()
        )

    def _build_input_conv(
        self, channel: int, conv_cfg: dict | None, norm_cfg: dict | None
    ) -> ConvModule:
        return ConvModule(
            channel, channel, 3, padding=1, conv_cfg=conv_cfg, norm_cfg=norm_cfg, bias=True
        )

    @abstractmethod
    def _binary_op(self, x1: Tensor, x2: Tensor) -> Tensor:
        """Combine the two resized inputs."""

    def _resize(self, x: Tensor, size: tuple) -> Tensor:
        h, w = x.shape[-2:]
        target_h, target_w = size
        if (h, w) == (target_h, target_w):
            return x
        if h < target_h or w < target_w:
            return F.interpolate(x, size=size, mode=self.upsample_mode)
        # Shrink by max pooling with an integer stride; pad (centred, with zeros) to a
        # multiple of the target first.
        pad_h = math.ceil(h / target_h) * target_h - h
        pad_w = math.ceil(w / target_w) * target_w - w
        if pad_h or pad_w:
            x = F.pad(x, (pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2))
        kernel_size = (x.shape[-2] // target_h, x.shape[-1] // target_w)
        return F.max_pool2d(x, kernel_size=kernel_size, stride=kernel_size)

    def forward(self, x1: Tensor, x2: Tensor, out_size: tuple | None = None) -> Tensor:
        """Merge ``x1`` and ``x2`` (same batch and channels) at ``out_size``.

        Args:
            x1: First input, shape (N, C, H1, W1).
            x2: Second input, shape (N, C, H2, W2).
            out_size: (height, width) of the result. Default: the larger input size (compared
                as (height, width) tuples, as mmcv does).

        Returns:
            The merged map.
        """
        assert x1.shape[:2] == x2.shape[:2], "x1 and x2 must share batch size and channels"
        assert out_size is None or len(out_size) == 2
        if out_size is None:
            out_size = max(tuple(x1.shape[2:]), tuple(x2.shape[2:]))
        x1 = self._resize(self.input1_conv(x1), tuple(out_size))
        x2 = self._resize(self.input2_conv(x2), tuple(out_size))
        x = self._binary_op(x1, x2)
        if self.with_out_conv:
            x = self.out_conv(x)
        return x


class SumCell(BaseMergeCell):
    """Merge by addition.

    Args:
        in_channels: Channels of each input.
        out_channels: Output channels.
        **kwargs: Further arguments of :class:`BaseMergeCell`.
    """

    def __init__(self, in_channels: int, out_channels: int, **kwargs: Any) -> None:
        super().__init__(in_channels, out_channels, **kwargs)

    def _binary_op(self, x1: Tensor, x2: Tensor) -> Tensor:
        return x1 + x2


class ConcatCell(BaseMergeCell):
    """Merge by channel concatenation (``out_conv`` sees ``2 * in_channels``).

    Args:
        in_channels: Channels of each input.
        out_channels: Output channels.
        **kwargs: Further arguments of :class:`BaseMergeCell`.
    """

    def __init__(self, in_channels: int, out_channels: int, **kwargs: Any) -> None:
        super().__init__(in_channels * 2, out_channels, **kwargs)

    def _binary_op(self, x1: Tensor, x2: Tensor) -> Tensor:
        return torch.cat([x1, x2], dim=1)


class GlobalPoolingCell(BaseMergeCell):
    """Merge as ``x2 + sigmoid(global_avg_pool(x2)) * x1``.

    Args:
        in_channels: Channels of each input.
        out_channels: Output channels.
        **kwargs: Further arguments of :class:`BaseMergeCell`.
    """

    def __init__(
        self, in_channels: int | None = None, out_channels: int | None = None, **kwargs: Any
    ) -> None:
        super().__init__(in_channels, out_channels, **kwargs)
        self.global_pool = nn.AdaptiveAvgPool2d((1, 1))

    def _binary_op(self, x1: Tensor, x2: Tensor) -> Tensor:
        return x2 + self.global_pool(x2).sigmoid() * x1
