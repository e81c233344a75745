"""Dropout layers: :class:`DropPath` (stochastic depth), :class:`Dropout`, :func:`build_dropout`."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from mmpar.utils.registry import build_from_cfg

from .registry import DROPOUT_LAYERS


def drop_path(x: torch.Tensor, drop_prob: float = 0.0, training: bool = False) -> torch.Tensor:
    """Zero whole samples of ``x`` with probability ``drop_prob`` and rescale the rest.

    Stochastic depth for the residual branch: each sample of the batch (dim 0) is kept with
    probability ``1 - drop_prob`` and divided by it, so the expectation is unchanged. Outside
    training, or with ``drop_prob == 0``, ``x`` is returned as is.
    """
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    # One draw per sample, broadcast over every other dimension (any rank, not just 4-D).
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    keep = (keep_prob + torch.rand(shape, dtype=x.dtype, device=x.device)).floor()
    return x.div(keep_prob) * keep


@DROPOUT_LAYERS.register_module()
class DropPath(nn.Module):
    """Stochastic depth as a module (see :func:`drop_path`).

    Args:
        drop_prob: Probability that a sample's path is zeroed. Default: 0.1.
    """

    def __init__(self, drop_prob: float = 0.1) -> None:
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply :func:`drop_path` (only in training mode)."""
        return drop_path(x, self.drop_prob, self.training)


@DROPOUT_LAYERS.register_module()
class Dropout(nn.Dropout):
    """``nn.Dropout`` whose probability is called ``drop_prob``, like :class:`DropPath`'s.

    Args:
        drop_prob: Probability that an element is zeroed. Default: 0.5.
        inplace: Zero in place. Default: False.
    """

    def __init__(self, drop_prob: float = 0.5, inplace: bool = False) -> None:
        super().__init__(p=drop_prob, inplace=inplace)


def build_dropout(cfg: dict, default_args: dict | None = None) -> Any:
    """Build a ``DROPOUT_LAYERS`` layer from ``cfg`` (``default_args`` fill missing keys)."""
    return build_from_cfg(cfg, DROPOUT_LAYERS, default_args)


__all__ = ["DropPath", "Dropout", "build_dropout", "drop_path"]
