"""Turn SyncBatchNorm layers back into plain BatchNorm layers (to run on one device)."""

from __future__ import annotations

import sys

import torch
from torch import nn

__all__ = ["revert_sync_batchnorm"]


class _BatchNormXd(nn.modules.batchnorm._BatchNorm):
    """A BatchNorm for inputs of any rank (SyncBatchNorm does not record 1d/2d/3d)."""

    def _check_input_dim(self, input: torch.Tensor) -> None:
        return


def _sync_bn_types() -> tuple[type, ...]:
    types: list[type] = [nn.SyncBatchNorm]
    # mmpar.ops (a higher layer) may define its own SyncBatchNorm. If it was never imported,
    # no such layer can exist, so looking it up in sys.modules is enough and imports nothing.
    ops = sys.modules.get("mmpar.ops")
    ops_sync_bn = getattr(ops, "SyncBatchNorm", None)
    if isinstance(ops_sync_bn, type):
        types.append(ops_sync_bn)
    return tuple(types)


def revert_sync_batchnorm(module: nn.Module) -> nn.Module:
    """Replace every ``SyncBatchNorm`` in ``module`` by an equivalent plain BatchNorm layer.

    The new layers share the parameters and buffers (running statistics, batch count) of the
    old ones and keep their training mode and ``qconfig``.

    Args:
        module: A module or model; children are converted in place.

    Returns:
        The converted module (a new object when ``module`` itself was a SyncBatchNorm).
    """
    converted = module
    if isinstance(module, _sync_bn_types()):
        converted = _BatchNormXd(
            module.num_features,
            module.eps,
            module.momentum,
            module.affine,
            module.track_running_stats,
        )
        if module.affine:
            with torch.no_grad():
                converted.weight = module.weight
                converted.bias = module.bias
        converted.running_mean = module.running_mean
        converted.running_var = module.running_var
        converted.num_batches_tracked = module.num_batches_tracked
        converted.training = module.training
        if hasattr(module, "qconfig"):
            converted.qconfig = module.qconfig
    for name, child in module.named_children():
        converted.add_module(name, revert_sync_batchnorm(child))
    return converted
