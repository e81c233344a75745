"""Activation layers: the ``ACTIVATION_LAYERS`` entries and :func:`build_activation_layer`.

torch's own classes are registered under their class names, as mmcv does on torch >= 1.7
(``GELU`` and ``SiLU`` are ``nn.GELU`` and ``nn.SiLU``); :class:`Clamp` (also ``'Clip'``) is ours.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils import TORCH_VERSION as TORCH_VERSION
from mmpar.utils import digit_version as digit_version
from mmpar.utils.registry import build_from_cfg

from .registry import ACTIVATION_LAYERS

for _torch_activation in (
    nn.ReLU,
    nn.LeakyReLU,
    nn.PReLU,
    nn.RReLU,
    nn.ReLU6,
    nn.ELU,
    nn.Sigmoid,
    nn.Tanh,
    nn.SiLU,
    nn.GELU,
):
    ACTIVATION_LAYERS.register_module(module=_torch_activation)


@ACTIVATION_LAYERS.register_module(name="Clip")
@ACTIVATION_LAYERS.register_module()
class Clamp(nn.Module):
    """Clamp the input to ``[min, max]`` (``torch.clamp``).

    Args:
        min: Lower bound. Default: -1.
        max: Upper bound. Default: 1.
    """

    def __init__(self, min: float = -1.0, max: float = 1.0) -> None:
        super().__init__()
        self.min = min
        self.max = max

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return ``x`` clamped to ``[self.min, self.max]``."""
        return torch.clamp(x, min=self.min, max=self.max)


class GELU(nn.Module):
    """GELU, ``x * Φ(x)`` with Φ the standard normal CDF (``F.gelu``).

    mmcv's fallback for torch < 1.4; the registry's ``'GELU'`` is ``nn.GELU``, as in mmcv on
    any newer torch.
    """

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        """Return ``F.gelu(input)``."""
        return F.gelu(input)


def build_activation_layer(cfg: dict) -> nn.Module:
    """Build an activation layer from ``cfg`` (``type`` an ``ACTIVATION_LAYERS`` name).

    Raises:
        TypeError: ``cfg`` is not a dict, or an argument the layer does not take.
        KeyError: ``cfg`` has no ``type`` or names an unregistered one.
    """
    return build_from_cfg(cfg, ACTIVATION_LAYERS)


__all__ = ["ACTIVATION_LAYERS", "GELU", "Clamp", "build_activation_layer"]
