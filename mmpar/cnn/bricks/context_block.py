""":class:`ContextBlock`, the global context block of GCNet (Cao et al., 2019)."""

from __future__ import annotations

from typing import Union

import torch
from torch import nn

from mmpar.runner.model_setup.weight_init import constant_init, kaiming_init

from .registry import PLUGIN_LAYERS


def last_zero_init(m: Union[nn.Module, nn.Sequential]) -> None:
    """Zero the weight and bias of ``m``, or of its last layer when ``m`` is a Sequential."""
    constant_init(m[-1] if isinstance(m, nn.Sequential) else m, val=0)


def _transform(channels: int, planes: int) -> nn.Sequential:
    # conv 1x1 -> LayerNorm -> ReLU -> conv 1x1: the keys channel_{add,mul}_conv.{0,1,3}.*
    return nn.Sequential(
        nn.Conv2d(channels, planes, kernel_size=1),
        nn.LayerNorm([planes, 1, 1]),
        nn.ReLU(inplace=True),
        nn.Conv2d(planes, channels, kernel_size=1),
    )


@PLUGIN_LAYERS.register_module()
class ContextBlock(nn.Module):
    """GCNet's context block: pool a global context vector, transform it, fuse it back.

    Args:
        in_channels: Channels of the input.
        ratio: Bottleneck width of the transform, as a fraction of ``in_channels``.
        pooling_type: ``'att'`` (a 1x1 conv's softmax weights the positions) or ``'avg'``.
        fusion_types: Any of ``'channel_add'`` (add the context) and ``'channel_mul'``
            (multiply by its sigmoid). Default: ``('channel_add',)``.

    Raises:
        AssertionError: An unknown pooling or fusion type, or no fusion type.
    """

    _abbr_ = "context_block"

    def __init__(
        self,
        in_channels: int,
        ratio: float,
        pooling_type: str = "att",
        fusion_types: tuple = ("channel_add",),
    ) -> None:
        super().__init__()
        assert pooling_type in ("avg", "att"), f"pooling_type must be avg or att: {pooling_type}"
        assert isinstance(fusion_types, (list, tuple)), "fusion_types must be a list or tuple"
        assert all(f in ("channel_add", "channel_mul") for f in fusion_types), (
            f"fusion_types must be channel_add and/or channel_mul: {fusion_types}"
        )
        assert len(fusion_types) > 0, "at least one fusion should be used"
        self.in_channels = in_channels
        self.ratio = ratio
        self.planes = int(in_channels * ratio)
        self.pooling_type = pooling_type
        self.fusion_types = fusion_types
        if pooling_type == "att":
            self.conv_mask = nn.Conv2d(in_channels, 1, kernel_size=1)
            self.softmax = nn.Softmax(dim=2)
        else:
            self.avg_pool = nn.AdaptiveAvgPool2d(1)
        self.channel_add_conv: nn.Sequential | None = (
            _transform(in_channels, self.planes) if "channel_add" in fusion_types else None
        )
        self.channel_mul_conv: nn.Sequential | None = (
            _transform(in_channels, self.planes) if "channel_mul" in fusion_types else None
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Kaiming (fan-in) for the attention mask; zero for each transform's last conv.

        The zeroed last conv makes the block start as the identity.
        """
        if self.pooling_type == "att":
            kaiming_init(self.conv_mask, mode="fan_in")
            self.conv_mask.inited = True
        for transform in (self.channel_add_conv, self.channel_mul_conv):
            if transform is not None:
                last_zero_init(transform)

    def spatial_pool(self, x: torch.Tensor) -> torch.Tensor:
        """The context vector of each sample, ``[N, C, 1, 1]``."""
        if self.pooling_type != "att":
            return self.avg_pool(x)
        batch, channel, height, width = x.size()
        # Softmax over positions of the 1-channel mask, then the weighted sum of the features.
        weights = self.softmax(self.conv_mask(x).view(batch, 1, height * width))
        context = torch.matmul(
            x.view(batch, channel, height * width).unsqueeze(1), weights.unsqueeze(-1)
        )
        return context.view(batch, channel, 1, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return ``x`` fused with its transformed context."""
        context = self.spatial_pool(x)
        out = x
        if self.channel_mul_conv is not None:
            out = out * torch.sigmoid(self.channel_mul_conv(context))
        if self.channel_add_conv is not None:
            out = out + self.channel_add_conv(context)
        return out


__all__ = ["ContextBlock", "last_zero_init"]
