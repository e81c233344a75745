"""Global average pooling neck."""

from __future__ import annotations

from typing import Union

import torch
from torch import nn

from ..builder import NECKS


@NECKS.register_module()
class GlobalAveragePooling(nn.Module):
    """Average each feature map over its spatial dims and flatten it (N×C×H×W → N×C).

    Args:
        dim: Spatial dims of the inputs: 1, 2 or 3.
    """

    def __init__(self, dim: int = 2) -> None:
        super().__init__()
        if dim not in (1, 2, 3):
            raise ValueError(f"GlobalAveragePooling dim must be 1, 2 or 3, got {dim}")
        self.dim = dim

    def _pool(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != self.dim + 2:
            raise ValueError(
                f"GlobalAveragePooling(dim={self.dim}) expects {self.dim + 2}-D inputs, "
                f"got shape {tuple(x.shape)}"
            )
        return x.mean(dim=tuple(range(2, x.dim())))

    def forward(
        self, inputs: Union[torch.Tensor, tuple[torch.Tensor, ...]]
    ) -> Union[torch.Tensor, tuple[torch.Tensor, ...]]:
        """Pool a tensor, or each tensor of a tuple."""
        if isinstance(inputs, (tuple, list)):
            return tuple(self._pool(x) for x in inputs)
        return self._pool(inputs)
