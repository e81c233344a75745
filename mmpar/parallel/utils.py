"""``is_module_wrapper``: whether a module wraps the real model (mmcv's ``parallel.utils``)."""

from __future__ import annotations

from torch import nn

from mmpar.utils.registry import Registry

from .registry import MODULE_WRAPPERS

__all__ = ["is_module_wrapper"]


def _wrapper_classes(registry: Registry) -> list[type]:
    classes = list(registry.module_dict.values())
    for child in registry.children.values():
        classes.extend(_wrapper_classes(child))
    return classes


def is_module_wrapper(module: nn.Module) -> bool:
    """Return True if ``module`` is an instance of a registered module wrapper.

    Wrappers registered in ``MODULE_WRAPPERS`` or in any of its child registries (downstream
    projects' scopes) count, and so do their subclasses; the real model is then
    ``module.module``.

    Args:
        module: The module to check.

    Returns:
        Whether ``module`` wraps another model.
    """
    return isinstance(module, tuple(_wrapper_classes(MODULE_WRAPPERS)))
