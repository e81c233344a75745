"""Module wrappers: ``is_module_wrapper`` (mmcv's ``parallel.utils``) and what lies under them.

A model may sit under several wrappers: registered ones (``MODULE_WRAPPERS`` and its child
registries: DataParallel, DDP, the MM* wrappers, FSDP, users' own) whose real model is
``.module``, and ``torch.compile``'s ``OptimizedModule`` (``._orig_mod``). Wrappers may also sit
*inside* a model (a wrapped neck), adding ``module.`` / ``_orig_mod.`` segments to its state
dict keys. :func:`model_layout` answers, in one pass, everything checkpoint code asks about
that: the bare model, whether it is sharded, and which key segments wrappers add. Code that
saves often (a runner's Checkpointer) keeps the answer while it holds the same model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from torch import nn

from mmpar.utils.registry import Registry

from .fully_sharded import is_fully_sharded
from .registry import MODULE_WRAPPERS

__all__ = ["ModelLayout", "is_module_wrapper", "model_layout", "unwrap_model"]


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


def _wrapped_attr(module: Any, wrappers: tuple[type, ...]) -> str | None:
    """The attribute holding the module ``module`` wraps, or None if it wraps nothing."""
    if isinstance(module, wrappers):
        return "module"
    # torch.compile(model) returns an OptimizedModule holding the model as ``_orig_mod``.
    if isinstance(getattr(module, "_orig_mod", None), nn.Module):
        return "_orig_mod"
    return None


def _unwrap(module: Any, wrappers: tuple[type, ...]) -> Any:
    attr = _wrapped_attr(module, wrappers)
    while attr is not None:
        module = getattr(module, attr)
        attr = _wrapped_attr(module, wrappers)
    return module


def unwrap_model(module: nn.Module) -> nn.Module:
    """The bare model under any wrappers (registered module wrappers, ``torch.compile``)."""
    return _unwrap(module, tuple(_wrapper_classes(MODULE_WRAPPERS)))


@dataclass(frozen=True)
class ModelLayout:
    """What checkpoint code needs to know about a (wrapped) model; see :func:`model_layout`.

    Attributes:
        model: The model as given (wrappers included).
        bare: The model under all its wrappers: whose state dict a checkpoint holds.
        sharded: The model is sharded by FSDP (``fully_shard``): reading or loading its full
            state is a collective every rank joins.
        clean_paths: For submodules of ``bare`` under a wrapper inside it: their path in
            ``bare.state_dict()`` keys -> the path without the wrappers' ``module.`` /
            ``_orig_mod.`` segments. Empty for the usual model without inner wrappers.
    """

    model: Any
    bare: Any
    sharded: bool
    clean_paths: Mapping[str, str]


def _clean_paths(
    module: nn.Module, path: str, clean: str, wrappers: tuple[type, ...], out: dict[str, str]
) -> None:
    hidden = _wrapped_attr(module, wrappers) if path else None  # the root is bare already
    for name, child in module.named_children():
        child_path = f"{path}.{name}" if path else name
        child_clean = clean if name == hidden else (f"{clean}.{name}" if clean else name)
        if child_clean != child_path:
            out[child_path] = child_clean
        _clean_paths(child, child_path, child_clean, wrappers, out)


def model_layout(model: Any) -> ModelLayout:
    """Unwrap ``model`` once: its bare model, whether it is sharded, its inner wrappers' paths.

    The registered wrappers are read now, so wrappers registered after import count; the
    answer holds as long as neither the model's wrapping nor the registry changes.
    """
    wrappers = tuple(_wrapper_classes(MODULE_WRAPPERS))
    bare = _unwrap(model, wrappers)
    paths: dict[str, str] = {}
    if isinstance(bare, nn.Module):
        _clean_paths(bare, "", "", wrappers, paths)
    sharded = isinstance(bare, nn.Module) and is_fully_sharded(bare)
    return ModelLayout(model=model, bare=bare, sharded=sharded, clean_paths=paths)
