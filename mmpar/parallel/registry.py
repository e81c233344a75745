"""MODULE_WRAPPERS: the registry of model wrappers, and ``is_module_wrapper``."""

from __future__ import annotations

from torch import nn
from torch.nn.parallel import DataParallel, DistributedDataParallel

from mmpar.utils.registry import Registry

__all__ = ["MODULE_WRAPPERS", "is_module_wrapper"]

MODULE_WRAPPERS = Registry("module wrapper")
MODULE_WRAPPERS.register_module(module=DataParallel)
MODULE_WRAPPERS.register_module(module=DistributedDataParallel)


def _wrapper_classes(registry: Registry) -> list[type]:
    classes = list(registry.module_dict.values())
    for child in registry.children.values():
        classes.extend(_wrapper_classes(child))
    return classes


def is_module_wrapper(module: nn.Module) -> bool:
    """Return True if ``module`` is an instance of a registered module wrapper.

    Wrappers registered in ``MODULE_WRAPPERS`` or in any of its child registries (downstream
    projects' scopes) count; the real model is then ``module.module``.

    Args:
        module: The module to check.

    Returns:
        Whether ``module`` wraps another model.
    """
    return isinstance(module, tuple(_wrapper_classes(MODULE_WRAPPERS)))
