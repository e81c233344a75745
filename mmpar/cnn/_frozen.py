"""The ``train()`` rules of mmcv's classic backbones (VGG, ResNet): BN eval and frozen parts."""

from __future__ import annotations

from torch import nn


def freeze(module: nn.Module, eval_mode: bool = True) -> None:
    """Stop gradients to ``module``'s parameters and (with ``eval_mode``) put it in eval mode."""
    if eval_mode:
        module.eval()
    for param in module.parameters():
        param.requires_grad = False


def apply_bn_eval(model: nn.Module, bn_frozen: bool) -> None:
    """Put every ``BatchNorm2d`` of ``model`` in eval mode; with ``bn_frozen`` also freeze it."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()
            if bn_frozen:
                freeze(m, eval_mode=False)
