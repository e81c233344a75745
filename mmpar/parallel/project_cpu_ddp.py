"""CPU distributed training for released mmcv 1.x projects' own training code.

mmcls 0.25, mmdet 2.28, mmseg 0.30 and mmaction2 0.24 pick ``cfg.device = 'cpu'`` on a machine
without CUDA, then hand that device to their own DDP builder, which refuses it
(``RuntimeError: Unavailable device "cpu"``, ``AssertionError: Only available for cuda or mlu
or npu devices.``): their ``--launcher pytorch`` path cannot run on CPU as released, although
``torch.distributed`` with gloo and :class:`~mmpar.parallel.MMDistributedDataParallel` can.

:func:`install` adds the CPU case to those builders, without editing any file of the project:
when one of the modules in :data:`BUILDERS` is imported, its builder is replaced, in that
module, by one that wraps a model on device ``'cpu'`` in ``MMDistributedDataParallel`` without
``device_ids`` (the CPU form of the project's cuda branch) and hands every other device to the
project's own function unchanged. Modules imported before :func:`install` have the name rebound
wherever the project (or ``__main__``) imported it to (``mmcls.utils``, ``mmcls.apis.train``).

The zero-edit launcher (``python -m mmpar.as_mmcv``) installs it. A ported tree imports it from
its config: ``custom_imports = dict(imports=['mmpar.parallel.project_cpu_ddp'])`` (importing
this module installs it).

Not covered: mmpose 0.29, whose ``train_model`` calls ``model.cuda()`` and
``torch.cuda.current_device()`` inline (no builder to extend); see docs/distributed.md.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Callable
from typing import Any

from .distributed import MMDistributedDataParallel

__all__ = ["BUILDERS", "cpu_aware", "install", "installed"]

#: ``{module: (builder name, calling convention)}``: where each project defines its DDP builder.
#: ``"args"``: ``f(model, device, *args, **ddp_kwargs)``; ``"default_args"``:
#: ``f(model, device, default_args=ddp_kwargs)`` (mmaction2).
BUILDERS: dict[str, tuple[str, str]] = {
    "mmcls.utils.distribution": ("wrap_distributed_model", "args"),
    "mmdet.utils.util_distribution": ("build_ddp", "args"),
    "mmseg.utils.util_distribution": ("build_ddp", "args"),
    "mmaction.utils.distribution_env": ("build_ddp", "default_args"),
}

_MARK = "__mmpar_cpu_ddp__"


def _cpu_ddp(model: Any, *args: Any, **kwargs: Any) -> MMDistributedDataParallel:
    # DistributedDataParallel refuses device_ids for a CPU module; the projects always pass them.
    kwargs.pop("device_ids", None)
    return MMDistributedDataParallel(model.cpu(), *args, **kwargs)


def cpu_aware(builder: Callable, convention: str) -> Callable:
    """The project's DDP ``builder`` with the ``'cpu'`` device added.

    Args:
        builder: The project's function (``build_ddp``, ``wrap_distributed_model``).
        convention: ``"args"`` or ``"default_args"`` (see :data:`BUILDERS`).

    Returns:
        A function with the builder's name and signature; for ``device='cpu'`` it returns
        ``MMDistributedDataParallel(model.cpu(), ...)`` without ``device_ids``, for any other
        device the builder's own result.

    Raises:
        ValueError: ``convention`` is not one of the two above.
    """
    if convention not in ("args", "default_args"):
        raise ValueError(
            f"cpu_aware: unknown convention {convention!r}; use 'args' or 'default_args'"
        )
    if getattr(builder, _MARK, False):
        return builder

    @functools.wraps(builder)
    def build(model: Any, device: str = "cuda", *args: Any, **kwargs: Any) -> Any:
        if device != "cpu":
            return builder(model, device, *args, **kwargs)
        if convention == "default_args":
            default_args = kwargs.pop("default_args", None) or (args[0] if args else {})
            return _cpu_ddp(model, **dict(default_args))
        return _cpu_ddp(model, *args, **kwargs)

    setattr(build, _MARK, True)
    return build


def _patch(module: types.ModuleType) -> None:
    """Replace the builder in ``module`` and wherever an imported module bound it by name."""
    name, convention = BUILDERS[module.__name__]
    original = getattr(module, name, None)
    if original is None or getattr(original, _MARK, False):
        return
    replacement = cpu_aware(original, convention)
    # Where the project's own code (and the program it runs) bound the name on import.
    package = module.__name__.partition(".")[0]
    for other_name, other in list(sys.modules.items()):
        if other_name != "__main__" and other_name.partition(".")[0] != package:
            continue
        namespace = getattr(other, "__dict__", None)
        if isinstance(namespace, dict) and namespace.get(name) is original:
            namespace[name] = replacement


class _PatchingLoader(importlib.abc.Loader):
    """The module's own loader; after it ran the module, :func:`_patch` runs."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self.loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        # The module keeps its own loader (get_source, resource reading ...), not this wrapper.
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        _patch(module)


class _BuilderFinder(importlib.abc.MetaPathFinder):
    """Find the modules of :data:`BUILDERS` as the other finders do, with a patching loader."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        if fullname not in BUILDERS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _PatchingLoader(spec.loader)
                return spec
        return None


_FINDER = _BuilderFinder()


def installed() -> bool:
    """Whether :func:`install` ran in this process."""
    return _FINDER in sys.meta_path


def install() -> None:
    """Add the CPU case to the projects' DDP builders (idempotent).

    Modules of :data:`BUILDERS` already imported are patched now; the others when imported.
    """
    if not installed():
        sys.meta_path.insert(0, _FINDER)
    for name in BUILDERS:
        module = sys.modules.get(name)
        if module is not None:
            _patch(module)


install()
