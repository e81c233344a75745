"""Swish, ``x * sigmoid(x)``; ``'Swish'``."""

from __future__ import annotations

import torch
from torch import nn

from .registry import ACTIVATION_LAYERS


@ACTIVATION_LAYERS.register_module()
class Swish(nn.Module):
    """Swish: ``x * sigmoid(x)`` (torch's ``SiLU``, under mmcv's name; no ``inplace``)."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return ``x * sigmoid(x)``."""
        return x * torch.sigmoid(x)


__all__ = ["Swish"]
