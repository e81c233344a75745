"""MODULE_WRAPPERS: the registry of model wrappers (``is_module_wrapper`` lives in ``utils``)."""

from __future__ import annotations

from typing import Any

from torch.nn.parallel import DataParallel, DistributedDataParallel

from mmpar.utils.registry import Registry

__all__ = ["MODULE_WRAPPERS"]

MODULE_WRAPPERS = Registry("module wrapper")
MODULE_WRAPPERS.register_module(module=DataParallel)
MODULE_WRAPPERS.register_module(module=DistributedDataParallel)


def __getattr__(name: str) -> Any:
    # ``from mmpar.parallel.registry import is_module_wrapper`` worked before the function
    # moved to ``utils`` (mmcv's place); served lazily because ``utils`` imports this module.
    if name == "is_module_wrapper":
        from .utils import is_module_wrapper

        return is_module_wrapper
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
