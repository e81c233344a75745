"""MMDistributedDataParallel: DDP whose train_step/val_step run through DDP's own forward."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from torch import nn
from torch.nn.parallel import DistributedDataParallel

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.parallel.scatter_gather import ScatterInputs as ScatterInputs
from mmpar.utils import TORCH_VERSION as TORCH_VERSION
from mmpar.utils import digit_version as digit_version
from mmpar.utils import print_log as print_log

from .collate import merge_chunks
from .data_container import DataContainer
from .data_parallel import WrapperStepsMixin
from .registry import MODULE_WRAPPERS
from .scatter_gather import scatter_kwargs

__all__ = ["MMDistributedDataParallel"]


class _CpuOnly:
    """The data of a ``cpu_only`` DataContainer on its way through a wrapper's forward.

    DDP's ``_pre_forward`` and FSDP2's root pre-forward move every tensor they find in the
    inputs to the device; they look into tensors, lists, tuples, dicts, named tuples and
    dataclasses only, so this box passes them untouched (mmcv kept such fields on the CPU).
    The routed call inside the wrapped module unpacks it (:func:`_unhide_cpu_only`).
    """

    __slots__ = ("data",)

    def __init__(self, data: Any) -> None:
        self.data = data


def _same_kind(like: dict, items: dict) -> dict:
    """``items`` as a mapping of ``like``'s type where its constructor allows (else a dict)."""
    try:
        return type(like)(items)
    except TypeError:
        return items


def _hide_cpu_only(obj: Any) -> tuple[Any, bool]:
    """``obj`` with each ``cpu_only`` DataContainer replaced by a :class:`_CpuOnly` box.

    The box holds what scatter would have made of the container for one device: its chunks
    merged into one. Returns the (possibly same) object and whether anything was hidden.
    """
    if isinstance(obj, DataContainer):
        if obj.cpu_only and isinstance(obj.data, list) and obj.data:
            return _CpuOnly(merge_chunks(obj).data[0]), True
        return obj, False
    if isinstance(obj, (tuple, list)):
        items = [_hide_cpu_only(o) for o in obj]
        if not any(found for _, found in items):
            return obj, False
        values = [value for value, _ in items]
        return (tuple(values) if isinstance(obj, tuple) else values), True
    if isinstance(obj, dict):
        items = {k: _hide_cpu_only(v) for k, v in obj.items()}
        if not any(found for _, found in items.values()):
            return obj, False
        return _same_kind(obj, {k: value for k, (value, _) in items.items()}), True
    return obj, False


def _unhide_cpu_only(obj: Any) -> Any:
    """Undo :func:`_hide_cpu_only` on the (moved) inputs the wrapped module receives."""
    if isinstance(obj, _CpuOnly):
        return obj.data
    if isinstance(obj, tuple):
        return tuple(_unhide_cpu_only(o) for o in obj)
    if isinstance(obj, list):
        return [_unhide_cpu_only(o) for o in obj]
    if isinstance(obj, dict):
        return _same_kind(obj, {k: _unhide_cpu_only(v) for k, v in obj.items()})
    return obj


def hide_cpu_only_inputs(inputs: tuple, kwargs: dict) -> tuple[tuple, dict, bool]:
    """Box the ``cpu_only`` DataContainers of a step's inputs (see :class:`_CpuOnly`)."""
    inputs, hidden_in = _hide_cpu_only(inputs)
    kwargs, hidden_kw = _hide_cpu_only(kwargs)
    return inputs, kwargs, hidden_in or hidden_kw


@contextlib.contextmanager
def _route_forward(
    module: nn.Module,
    name: str,
    wrapper: str = "MMDistributedDataParallel",
    unhide_cpu_only: bool = False,
) -> Iterator[None]:
    """Make the next ``module(...)`` call run ``module.<name>`` instead of ``forward``.

    Why this way: DDP's gradient-sync bookkeeping (buffer broadcast, unused-parameter search,
    reducer preparation) lives in its public ``forward``, which calls ``self.module(...)``.
    Shadowing ``forward`` with an instance attribute for that one call routes it to
    ``train_step`` without touching DDP internals and keeps ``ddp.module`` the user's model
    (checkpoints and ``runner.model.module`` rely on that). The shadow removes itself on first
    use, so a ``train_step`` that calls ``self(...)`` reaches the real ``forward``; ``finally``
    removes it if the call never happened. With ``unhide_cpu_only`` the call unpacks the
    boxed ``cpu_only`` fields (:func:`hide_cpu_only_inputs`) after torch moved the inputs.
    """
    step = getattr(module, name, None)
    if not callable(step):
        raise AttributeError(
            f"{type(module).__name__} has no {name}() method; "
            f"{wrapper}.{name} calls the wrapped model's {name}(data_batch, optimizer)"
        )
    had_own = "forward" in module.__dict__
    own = module.__dict__.get("forward")
    restored = False

    def restore() -> None:
        nonlocal restored
        if restored:
            return
        restored = True
        if had_own:
            module.__dict__["forward"] = own
        else:
            module.__dict__.pop("forward", None)

    def routed(*args: Any, **kwargs: Any) -> Any:
        restore()
        if unhide_cpu_only:
            args, kwargs = _unhide_cpu_only(args), _unhide_cpu_only(kwargs)
        return step(*args, **kwargs)

    module.__dict__["forward"] = routed
    try:
        yield
    finally:
        restore()


@MODULE_WRAPPERS.register_module()
class MMDistributedDataParallel(WrapperStepsMixin, DistributedDataParallel):
    """``DistributedDataParallel`` with DataContainer scatter and ``train_step``/``val_step``.

    Construct it exactly like ``DistributedDataParallel`` (``device_ids=[local_rank]`` with
    CUDA/nccl, ``device_ids=None`` on CPU/gloo). Each process runs its whole local batch:
    every chunk from ``collate`` is merged, DataContainers are unwrapped and moved to
    ``device_ids[0]`` (or kept on the CPU), then DDP's ``forward`` runs with the call routed to
    the model's ``train_step``/``val_step``, so gradient all-reduce, buffer broadcast and
    ``find_unused_parameters`` behave exactly as in plain DDP. ``self.module`` stays the user's
    model. Only public torch API is used.

    Example:
        >>> model = MMDistributedDataParallel(model, device_ids=None)  # CPU + gloo
        >>> outputs = model.train_step(data_batch, optimizer)
        >>> outputs['loss'].backward()
    """

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """Unwrap DataContainers, then run DDP's forward on the model's ``forward``."""
        inputs, kwargs, hidden = self._hide_cpu_only(inputs, kwargs)
        inputs, kwargs = self._local_inputs(inputs, kwargs)
        if not hidden:
            return super().forward(*inputs, **kwargs)
        with _route_forward(self.module, "forward", unhide_cpu_only=True):
            return super().forward(*inputs, **kwargs)

    def to_kwargs(self, inputs: Any, kwargs: Any, device_id: Any) -> tuple[tuple, tuple]:
        """Scatter to one device (mmcv 1.x name)."""
        return scatter_kwargs(inputs, kwargs, [device_id], dim=self.dim)

    def _step(self, name: str, inputs: tuple, kwargs: dict) -> Any:
        inputs, kwargs, hidden = self._hide_cpu_only(inputs, kwargs)
        inputs, kwargs = self._local_inputs(inputs, kwargs)
        with _route_forward(self.module, name, unhide_cpu_only=hidden):
            return super().forward(*inputs, **kwargs)

    def _hide_cpu_only(self, inputs: tuple, kwargs: dict) -> tuple[tuple, dict, bool]:
        # DDP moves the inputs only when it has device_ids (a CUDA module).
        if not self.device_ids:
            return inputs, kwargs, False
        return hide_cpu_only_inputs(inputs, kwargs)

    def _local_inputs(self, inputs: tuple, kwargs: dict) -> tuple[tuple, dict]:
        return self._one_device_inputs(
            inputs, kwargs, self.device_ids[0] if self.device_ids else -1
        )
