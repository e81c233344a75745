"""Hard sigmoid, ``clamp((x + bias) / divisor, min_value, max_value)``; ``'HSigmoid'``."""

from __future__ import annotations

import warnings

import torch
from torch import nn

from .registry import ACTIVATION_LAYERS


@ACTIVATION_LAYERS.register_module()
class HSigmoid(nn.Module):
    """Hard sigmoid: ``min(max((x + bias) / divisor, min_value), max_value)``.

    The defaults give torch's ``Hardsigmoid``, ``(x + 3) / 6`` clamped to [0, 1]; mmcv before
    1.4.4 used ``(x + 1) / 2``, and warns about that change on every construction, as this does.

    Args:
        bias: Added to the input. Default: 3.0.
        divisor: Divides the sum; must not be 0. Default: 6.0.
        min_value: Lower bound. Default: 0.0.
        max_value: Upper bound. Default: 1.0.

    Raises:
        AssertionError: ``divisor`` is 0.
    """

    def __init__(
        self,
        bias: float = 3.0,
        divisor: float = 6.0,
        min_value: float = 0.0,
        max_value: float = 1.0,
    ) -> None:
        super().__init__()
        warnings.warn(
            "HSigmoid's defaults follow torch's Hardsigmoid since MMCV v1.4.4: "
            "min(max((x + 3) / 6, 0), 1); before, they gave min(max((x + 1) / 2, 0), 1).",
            stacklevel=2,
        )
        assert divisor != 0, "HSigmoid's divisor must not be 0"
        self.bias = bias
        self.divisor = divisor
        self.min_value = min_value
        self.max_value = max_value

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return the hard sigmoid of ``x`` (a new tensor; ``x`` is unchanged)."""
        return ((x + self.bias) / self.divisor).clamp_(self.min_value, self.max_value)


__all__ = ["HSigmoid"]
