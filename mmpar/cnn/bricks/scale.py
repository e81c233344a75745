"""A learnable scalar factor (:class:`Scale`)."""

from __future__ import annotations

import torch
from torch import nn


class Scale(nn.Module):
    """Multiply the input by a learnable scalar (a parameter named ``scale``).

    Args:
        scale: Initial value. Default: 1.0.
    """

    def __init__(self, scale: float = 1.0) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(scale, dtype=torch.float))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return ``x * scale``."""
        return x * self.scale


__all__ = ["Scale"]
