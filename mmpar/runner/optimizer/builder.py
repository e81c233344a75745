"""OPTIMIZERS / OPTIMIZER_BUILDERS registries and build_optimizer (mmcv 1.x API)."""

from __future__ import annotations

import inspect
from typing import Any

import torch

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils import IS_NPU_AVAILABLE as IS_NPU_AVAILABLE
from mmpar.utils import build_from_cfg as build_from_cfg
from mmpar.utils.compat_errors import NOT_PROVIDED, not_provided
from mmpar.utils.registry import Registry

from ..arg_checks import split_constructor

OPTIMIZERS = Registry("optimizer")
OPTIMIZER_BUILDERS = Registry("optimizer builder")


def register_torch_optimizers() -> list[str]:
    """Register every optimizer class ``torch.optim`` exports; return their names.

    As in mmcv, every public class that is a ``torch.optim.Optimizer`` counts, the base class
    ``Optimizer`` included, so new torch optimizers (``Adafactor``, ...) appear by themselves.
    """
    names = []
    for name in dir(torch.optim):
        if name.startswith("__"):
            continue
        obj = getattr(torch.optim, name)
        if inspect.isclass(obj) and issubclass(obj, torch.optim.Optimizer):
            OPTIMIZERS.register_module(module=obj)
            names.append(name)
    return names


TORCH_OPTIMIZERS = register_torch_optimizers()


def build_optimizer_constructor(cfg: dict) -> Any:
    """Build an optimizer constructor from ``cfg`` (registry ``OPTIMIZER_BUILDERS``)."""
    return OPTIMIZER_BUILDERS.build(cfg)


def build_optimizer(model: torch.nn.Module, cfg: dict) -> torch.optim.Optimizer:
    """Build an optimizer for ``model`` from a config dict.

    Args:
        model: The model (module wrappers are unwrapped by the constructor).
        cfg: e.g. ``dict(type='SGD', lr=0.1, momentum=0.9, weight_decay=1e-4,
            paramwise_cfg=dict(bias_lr_mult=2.0))``; ``constructor`` names a custom
            constructor (default ``DefaultOptimizerConstructor``).

    Returns:
        The optimizer.
    """
    optimizer_cfg, constructor_type = split_constructor(
        cfg, "optimizer", "DefaultOptimizerConstructor"
    )
    paramwise_cfg = optimizer_cfg.pop("paramwise_cfg", None)
    constructor = build_optimizer_constructor(
        {"type": constructor_type, "optimizer_cfg": optimizer_cfg, "paramwise_cfg": paramwise_cfg}
    )
    return constructor(model)


def __getattr__(name: str) -> Any:
    # mmcv names mmpar leaves out fail with an ImportError that says why.
    if name in NOT_PROVIDED:
        raise not_provided(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
