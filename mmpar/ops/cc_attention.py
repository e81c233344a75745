"""mmcv 1.x's ``mmcv.ops.cc_attention``: criss-cross attention (CCNet), in plain PyTorch.

mmcv switched this op from CUDA to ``einsum`` in 1.3.13; the parameters (``query_conv``,
``key_conv``, ``value_conv``, ``gamma.scale``) keep mmcv's names, so its checkpoints load.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from mmpar.cnn.bricks.registry import PLUGIN_LAYERS
from mmpar.cnn.bricks.scale import Scale

__all__ = ["NEG_INF_DIAG", "CrissCrossAttention"]


def NEG_INF_DIAG(n: int, device: torch.device) -> Tensor:  # noqa: N802 (mmcv's name)
    """An (n, n) matrix with ``-inf`` on the diagonal and zeros elsewhere.

    Added to the column energies, it removes the query's own position there, since the row
    branch already counts it.

    Args:
        n: Size of the matrix.
        device: Device of the result.

    Returns:
        The matrix.
    """
    return torch.diag(torch.full((n,), float("-inf"), device=device))


@PLUGIN_LAYERS.register_module()
class CrissCrossAttention(nn.Module):
    """Criss-cross attention: each position attends to its row and its column.

    Args:
        in_channels: Channels of the input (queries and keys use ``in_channels // 8``).

    Raises:
        RuntimeError: At ``forward``, ``x`` is not ``(N, in_channels, H, W)`` (torch's
            convolution or einsum names the shapes).
    """

    def __init__(self, in_channels: int) -> None:
        super().__init__()
        self.query_conv = nn.Conv2d(in_channels, in_channels // 8, 1)
        self.key_conv = nn.Conv2d(in_channels, in_channels // 8, 1)
        self.value_conv = nn.Conv2d(in_channels, in_channels, 1)
        # Starts at zero: the block is the identity until gamma is learnt.
        self.gamma = Scale(0.0)
        self.in_channels = in_channels

    def forward(self, x: Tensor) -> Tensor:
        """Attend over rows and columns.

        Args:
            x: Input, shape (N, C, H, W).

        Returns:
            ``x + gamma * attention output``, shape (N, C, H, W).
        """
        h = x.size(2)
        query = self.query_conv(x)
        key = self.key_conv(x)
        value = self.value_conv(x)
        # energy_col[b, h, w, i]: query at (h, w) against key at (i, w), own position masked.
        energy_col = torch.einsum("bchw,bciw->bhwi", query, key) + NEG_INF_DIAG(
            h, x.device
        ).unsqueeze(1)
        # energy_row[b, h, w, j]: query at (h, w) against key at (h, j).
        energy_row = torch.einsum("bchw,bchj->bhwj", query, key)
        attn = F.softmax(torch.cat([energy_col, energy_row], dim=-1), dim=-1)
        out = torch.einsum("bciw,bhwi->bchw", value, attn[..., :h])
        out = out + torch.einsum("bchj,bhwj->bchw", value, attn[..., h:])
        return (self.gamma(out) + x).contiguous()

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(in_channels={self.in_channels})"
