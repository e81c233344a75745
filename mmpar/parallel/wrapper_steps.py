"""What both module wrappers add to their torch base: ``train_step``/``val_step`` and scatter."""

from __future__ import annotations

from typing import Any

from .scatter_gather import scatter_kwargs

__all__ = ["WrapperStepsMixin"]


class WrapperStepsMixin:
    """``train_step``/``val_step`` on a module wrapper, and DataContainer-aware ``scatter``.

    Put it before the torch wrapper class in the bases. The wrapper defines
    ``_step(name, inputs, kwargs)``: how the wrapped model's method ``name`` is called on the
    scattered inputs (``MMDataParallel`` calls it on each device's replica,
    ``MMDistributedDataParallel`` routes it through DDP's ``forward`` so gradients sync).
    """

    dim: int

    def _step(self, name: str, inputs: tuple, kwargs: dict) -> Any:
        raise NotImplementedError

    def train_step(self, *inputs: Any, **kwargs: Any) -> Any:
        """Scatter the inputs and call the wrapped model's ``train_step``."""
        return self._step("train_step", inputs, kwargs)

    def val_step(self, *inputs: Any, **kwargs: Any) -> Any:
        """Scatter the inputs and call the wrapped model's ``val_step``."""
        return self._step("val_step", inputs, kwargs)

    def scatter(self, inputs: Any, kwargs: Any, device_ids: Any) -> tuple[tuple, tuple]:
        """Scatter with :func:`mmpar.parallel.scatter_kwargs` (DataContainer-aware)."""
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)
