"""``init_weights(pretrained)`` of mmcv's classic backbones (VGG, ResNet, AlexNet)."""

from __future__ import annotations

import logging
from typing import Callable

from torch import nn

from mmpar.runner.checkpoint import load_checkpoint

from .utils.weight_init import constant_init, kaiming_init, normal_init


def init_or_load(
    model: nn.Module, pretrained: str | None, default_init: Callable[[], None]
) -> None:
    """Load ``pretrained`` (non-strict) into ``model``, or run ``default_init`` when it is None.

    Raises:
        TypeError: ``pretrained`` is neither a str nor None (mmcv's type).
    """
    if isinstance(pretrained, str):
        # mmcv reports key mismatches through the root logger; so do we.
        load_checkpoint(model, pretrained, strict=False, logger=logging.getLogger())
    elif pretrained is None:
        default_init()
    else:
        raise TypeError(f"pretrained must be a str or None, but got {type(pretrained).__name__}")


def default_init(model: nn.Module, linear_std: float | None = None) -> None:
    """Mmcv's default init of these backbones: Kaiming convs, BatchNorm weight 1 and bias 0.

    With ``linear_std``, linear layers are drawn from a normal with that std (VGG's head), in
    the same pass over ``model.modules()``, so the random draws come in mmcv's order.
    """
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            kaiming_init(m)
        elif isinstance(m, nn.BatchNorm2d):
            constant_init(m, 1)
        elif linear_std is not None and isinstance(m, nn.Linear):
            normal_init(m, std=linear_std)
