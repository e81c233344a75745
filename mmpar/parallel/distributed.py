"""MMDistributedDataParallel: DDP whose train_step/val_step run through DDP's own forward."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from torch import nn
from torch.nn.parallel import DistributedDataParallel

from .data_parallel import WrapperStepsMixin
from .registry import MODULE_WRAPPERS
from .scatter_gather import scatter_kwargs

__all__ = ["MMDistributedDataParallel"]


@contextlib.contextmanager
def _route_forward(
    module: nn.Module, name: str, wrapper: str = "MMDistributedDataParallel"
) -> Iterator[None]:
    """Make the next ``module(...)`` call run ``module.<name>`` instead of ``forward``.

    Why this way: DDP's gradient-sync bookkeeping (buffer broadcast, unused-parameter search,
    reducer preparation) lives in its public ``forward``, which calls ``self.module(...)``.
    Shadowing ``forward`` with an instance attribute for that one call routes it to
    ``train_step`` without touching DDP internals and keeps ``ddp.module`` the user's model
    (checkpoints and ``runner.model.module`` rely on that). The shadow removes itself on first
    use, so a ``train_step`` that calls ``self(...)`` reaches the real ``forward``; ``finally``
    removes it if the call never happened.
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
        inputs, kwargs = self._local_inputs(inputs, kwargs)
        return super().forward(*inputs, **kwargs)

    def to_kwargs(self, inputs: Any, kwargs: Any, device_id: Any) -> tuple[tuple, tuple]:
        """Scatter to one device (mmcv 1.x name)."""
        return scatter_kwargs(inputs, kwargs, [device_id], dim=self.dim)

    def _step(self, name: str, inputs: tuple, kwargs: dict) -> Any:
        inputs, kwargs = self._local_inputs(inputs, kwargs)
        with _route_forward(self.module, name):
            return super().forward(*inputs, **kwargs)

    def _local_inputs(self, inputs: tuple, kwargs: dict) -> tuple[tuple, dict]:
        return self._one_device_inputs(
            inputs, kwargs, self.device_ids[0] if self.device_ids else -1
        )
