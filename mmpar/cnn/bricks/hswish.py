"""Hard swish, ``x * ReLU6(x + 3) / 6``; ``'HSwish'`` builds torch's ``nn.Hardswish``."""

from __future__ import annotations

import torch
from torch import nn

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils import TORCH_VERSION as TORCH_VERSION
from mmpar.utils import digit_version as digit_version

from .registry import ACTIVATION_LAYERS


class HSwish(nn.Module):
    """Hard swish: ``x * ReLU6(x + 3) / 6``.

    mmcv's own module; the registry's ``'HSwish'`` is ``nn.Hardswish`` (same function), as in
    mmcv on torch >= 1.7.

    Args:
        inplace: Passed to the inner ``ReLU6``. Default: False.
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.act = nn.ReLU6(inplace)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return the hard swish of ``x``."""
        return x * self.act(x + 3) / 6


ACTIVATION_LAYERS.register_module(module=nn.Hardswish, name="HSwish")

__all__ = ["HSwish"]
