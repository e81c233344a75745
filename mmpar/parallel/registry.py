"""MODULE_WRAPPERS: the registry of model wrappers (``is_module_wrapper`` lives in ``utils``)."""

from __future__ import annotations

from torch.nn.parallel import DataParallel, DistributedDataParallel

from mmpar.utils.registry import Registry

__all__ = ["MODULE_WRAPPERS"]

MODULE_WRAPPERS = Registry("module wrapper")
MODULE_WRAPPERS.register_module(module=DataParallel)
MODULE_WRAPPERS.register_module(module=DistributedDataParallel)
