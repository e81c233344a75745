"""Fold BatchNorm layers into the convolutions before them, for faster inference."""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["fuse_conv_bn"]

_BN_TYPES = (nn.modules.batchnorm._BatchNorm, nn.SyncBatchNorm)


def _fuse_conv_bn(conv: nn.Module, bn: nn.Module) -> nn.Module:
    """Fold ``bn``'s eval-mode affine transform into ``conv``'s weight and bias (in place).

    ``bn(conv(x)) = gamma * (w*x + b - mean) / sqrt(var + eps) + beta``, so the fused conv
    has ``w' = w * s`` and ``b' = (b - mean) * s + beta`` with ``s = gamma / sqrt(var + eps)``.
    """
    bias = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
    scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
    shape = [conv.out_channels] + [1] * (conv.weight.dim() - 1)
    conv.weight = nn.Parameter(conv.weight * scale.reshape(shape))
    conv.bias = nn.Parameter((bias - bn.running_mean) * scale + bn.bias)
    return conv


def fuse_conv_bn(module: nn.Module) -> nn.Module:
    """Fuse every BatchNorm that directly follows a ``Conv2d`` among its siblings (recursively).

    The conv takes over the BatchNorm's eval-mode transform and the BatchNorm is replaced by
    ``nn.Identity`` (so module names stay the same). Only valid for inference: the fused
    model computes what the original computes in eval mode.

    Args:
        module: The model; changed in place.

    Returns:
        The same module, fused.
    """
    last_conv_name = None
    for name, child in module.named_children():
        if isinstance(child, _BN_TYPES):
            if last_conv_name is None:  # a BN not preceded by a conv stays
                continue
            module._modules[last_conv_name] = _fuse_conv_bn(module._modules[last_conv_name], child)
            module._modules[name] = nn.Identity()
            last_conv_name = None
        elif isinstance(child, nn.Conv2d):
            last_conv_name = name
        else:
            fuse_conv_bn(child)
    return module
