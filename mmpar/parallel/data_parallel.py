"""MMDataParallel, and the train_step/val_step with DataContainer scatter both wrappers add."""

from __future__ import annotations

from itertools import chain
from typing import Any, Union

import torch
from torch import nn

from .collate import _merge_dc, merge_chunks
from .registry import MODULE_WRAPPERS
from .scatter_gather import ScatterInputs as ScatterInputs  # mmcv's module imports it too
from .scatter_gather import _one_device_pair, gather
from .scatter_gather import scatter_kwargs as scatter_kwargs  # importable here, as in mmcv

__all__ = ["MMDataParallel"]


class WrapperStepsMixin:
    """``train_step``/``val_step`` on a module wrapper, and DataContainer-aware ``scatter``.

    Put it before the torch wrapper class in the bases. The wrapper defines
    ``_step(name, inputs, kwargs)``: how the wrapped model's method ``name`` is called on the
    scattered inputs (``MMDataParallel`` calls it on each device's replica,
    ``MMDistributedDataParallel`` routes it through DDP's ``forward`` so gradients sync).
    """

    dim: int
    module: nn.Module

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

    def _one_device_inputs(self, inputs: tuple, kwargs: dict, device: Any) -> tuple[tuple, dict]:
        """The whole local batch as one chunk on ``device`` (a CUDA index, or -1: the CPU).

        For wrappers with one process per device, where every chunk of ``collate`` belongs to
        this process.
        """
        if type(self).scatter is WrapperStepsMixin.scatter:
            # Merge and move in one walk; a subclass's own scatter is called as before.
            one = _one_device_pair(inputs, kwargs, device, merge=_merge_dc)
            if one is not None:
                return one
        scattered_in, scattered_kw = self.scatter(
            merge_chunks(inputs), merge_chunks(kwargs), [device]
        )
        return (scattered_in[0] if scattered_in else ()), (scattered_kw[0] if scattered_kw else {})


@MODULE_WRAPPERS.register_module()
class MMDataParallel(WrapperStepsMixin, nn.DataParallel):
    """``torch.nn.DataParallel`` with ``train_step``/``val_step`` and DataContainer scatter.

    Modes:

    - CPU (``device_ids=[-1]`` or no CUDA): every chunk of the batch is merged back into one
      batch and the wrapped module runs once on the CPU.
    - One GPU: the (merged) batch is copied to ``device_ids[0]`` and the module runs there.
    - Several GPUs: chunk ``i`` goes to ``device_ids[i]``; the module is replicated and the
      replicas' ``forward``/``train_step``/``val_step`` run in parallel; outputs are merged with
      :func:`mmpar.parallel.gather` (losses averaged by ``num_samples``).

    Args:
        module: The model; it must already live on ``device_ids[0]`` for GPU modes.
        device_ids: CUDA device ids, ``[-1]`` for CPU, or None for all visible GPUs.
        output_device: Device of gathered outputs (default ``device_ids[0]``).
        dim: Dim along which plain tensors are split and outputs concatenated.

    Example:
        >>> model = MMDataParallel(model, device_ids=[-1])
        >>> outputs = model.train_step(collate(samples, 4), optimizer)
    """

    def __init__(
        self,
        module: nn.Module,
        device_ids: list[Union[int, torch.device]] | None = None,
        output_device: Union[int, torch.device] | None = None,
        dim: int = 0,
    ) -> None:
        cpu = not torch.cuda.is_available() or (
            device_ids is not None and list(device_ids) in ([-1], [])
        )
        if cpu:
            # DataParallel's own constructor cannot express "CPU" while CUDA is present.
            nn.Module.__init__(self)
            self.module = module
            self.device_ids = []
            self.dim = dim
            self.output_device = None
            self.src_device_obj = torch.device("cpu")
        else:
            super().__init__(module, device_ids=device_ids, output_device=output_device, dim=dim)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """Scatter the inputs and call the module (see the class docstring for the modes)."""
        return self._step("forward", inputs, kwargs)

    def gather(self, outputs: list, output_device: Any) -> Any:
        """Merge replica outputs with :func:`mmpar.parallel.gather`."""
        return gather(outputs, output_device, dim=self.dim)

    def _step(self, name: str, inputs: tuple, kwargs: dict) -> Any:
        module = self.module
        fn = module if name == "forward" else getattr(module, name, None)
        if not callable(fn):
            raise AttributeError(
                f"{type(module).__name__} has no {name}() method; "
                f"MMDataParallel.{name} calls the wrapped model's {name}(data_batch, optimizer)"
            )
        device_ids = self.device_ids
        if len(device_ids) <= 1:  # the CPU or one GPU: the whole batch in one walk
            if device_ids:
                self._check_module_device()
            device = device_ids[0] if device_ids else -1
            inputs, kwargs = self._one_device_inputs(inputs, kwargs, device)
            return fn(*inputs, **kwargs)
        self._check_module_device()
        inputs, kwargs = self.scatter(inputs, kwargs, device_ids)
        if len(inputs) <= 1:
            return self._call(module, name, *self._first(inputs, kwargs))
        replicas = self.replicate(module, device_ids[: len(inputs)])
        calls = [r if name == "forward" else getattr(r, name) for r in replicas]
        outputs = self.parallel_apply(calls, inputs, kwargs)
        return self.gather(outputs, self.output_device)

    @staticmethod
    def _first(inputs: tuple, kwargs: tuple) -> tuple[tuple, dict]:
        return (inputs[0] if inputs else ()), (kwargs[0] if kwargs else {})

    @staticmethod
    def _call(module: nn.Module, name: str, inputs: tuple, kwargs: dict) -> Any:
        fn = module if name == "forward" else getattr(module, name)
        return fn(*inputs, **kwargs)

    def _check_module_device(self) -> None:
        expected = self.src_device_obj
        for pname, tensor in chain(self.module.named_parameters(), self.module.named_buffers()):
            if tensor.device != expected:
                raise RuntimeError(
                    f"MMDataParallel: module tensor {pname!r} is on {tensor.device} but "
                    f"device_ids[0] is {expected}; move the model first "
                    f"(model.to({str(expected)!r})) or use device_ids=[-1] for the CPU"
                )
