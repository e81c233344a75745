"""``init_weights(pretrained)`` of mmcv's classic backbones (VGG, ResNet, AlexNet)."""

from __future__ import annotations

import logging
from typing import Callable

from torch import nn

from mmpar.runner.checkpoint import load_checkpoint


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
