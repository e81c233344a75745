"""MMFullyShardedDataParallel: torch's FSDP2 (``fully_shard``) with mmcv's train_step/val_step.

Each rank keeps only its shard of every parameter, gradient and optimizer state (a ``DTensor``
sharded on dim 0); FSDP gathers a module's full parameters just before its forward/backward and
frees them after. All of that is torch's: this wrapper chooses which submodules become their
own FSDP unit, builds the device mesh and the mixed-precision / CPU-offload policies, and runs
the model's ``train_step``/``val_step`` through the root module's ``__call__`` so FSDP's hooks
see every step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Union

import torch
import torch.distributed as dist
from torch import nn

from .data_parallel import WrapperStepsMixin
from .distributed import _route_forward, hide_cpu_only_inputs
from .registry import MODULE_WRAPPERS

__all__ = ["MMFullyShardedDataParallel", "is_fully_sharded"]

DTypeLike = Union[str, torch.dtype, None]

_DTYPES = {
    "float32": torch.float32,
    "fp32": torch.float32,
    "float16": torch.float16,
    "fp16": torch.float16,
    "half": torch.float16,
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
}


def _as_dtype(value: DTypeLike, name: str) -> torch.dtype | None:
    if value is None or isinstance(value, torch.dtype):
        return value
    if isinstance(value, str) and value in _DTYPES:
        return _DTYPES[value]
    raise ValueError(
        f"MMFullyShardedDataParallel: {name}={value!r} is not a dtype; use one of "
        f"{sorted(_DTYPES)} or a torch.dtype (None keeps the parameters' own dtype)"
    )


def _fsdp_api() -> tuple[Any, Any, Any, Any]:
    try:
        from torch.distributed.fsdp import (
            CPUOffloadPolicy,
            FSDPModule,
            MixedPrecisionPolicy,
            fully_shard,
        )
    except ImportError as err:  # torch < 2.6 has FSDP2 only under a private path
        raise ImportError(
            f"MMFullyShardedDataParallel needs torch's FSDP2 (torch.distributed.fsdp.fully_shard,"
            f" torch >= 2.6); this torch is {torch.__version__}. Upgrade torch or train with "
            "MMDistributedDataParallel"
        ) from err
    return fully_shard, FSDPModule, MixedPrecisionPolicy, CPUOffloadPolicy


def is_fully_sharded(module: nn.Module) -> bool:
    """Whether ``module`` (or the model inside a module wrapper) was sharded by ``fully_shard``.

    Its state dict then holds ``DTensor`` shards, and gathering or loading a full state dict
    is a collective every rank must join.
    """
    inner = module.module if isinstance(module, MMFullyShardedDataParallel) else module
    try:
        from torch.distributed.fsdp import FSDPModule
    except ImportError:
        return False
    return isinstance(inner, FSDPModule)


def _shard_units(module: nn.Module, wrap_modules: Sequence[str]) -> list[nn.Module]:
    """The submodules whose class name is in ``wrap_modules``, children before parents."""
    wanted = set(wrap_modules)
    found = [m for _, m in module.named_modules() if m is not module and type(m).__name__ in wanted]
    missing = wanted - {type(m).__name__ for m in found}
    if missing:
        classes = sorted({type(m).__name__ for _, m in module.named_modules() if m is not module})
        raise ValueError(
            f"MMFullyShardedDataParallel: wrap_modules names {sorted(missing)}, but "
            f"{type(module).__name__} has no submodule of that class; its submodule classes are "
            f"{classes}"
        )
    # named_modules() lists parents first; fully_shard wants inner units sharded first.
    return list(reversed(found))


@MODULE_WRAPPERS.register_module()
class MMFullyShardedDataParallel(WrapperStepsMixin, nn.Module):
    """Shard a model over all ranks with ``fully_shard`` and run mmcv's ``train_step``/``val_step``.

    Needs an initialized default process group (``init_dist``); every rank of it holds one
    shard. Build the optimizer *after* wrapping, from the wrapper's (sharded) parameters.
    Checkpoint code must treat the model as collective (see :func:`is_fully_sharded`).

    Args:
        module: The bare model (on the CPU; it is moved to this rank's CUDA device when CUDA is
            available and ``cpu_offload`` is off).
        wrap_modules: Class names of submodules that become their own FSDP unit (e.g.
            ``['BasicBlock']``): their parameters are gathered only while they run, which
            lowers peak memory. The root module is always a unit (it holds the rest).
        param_dtype: Dtype of the gathered parameters in forward/backward (``'bfloat16'``,
            ``'float16'``, ``torch.bfloat16`` ...); the shards and optimizer stay in the
            parameters' own dtype; what the model returns is cast to float32. None: no mixed
            precision.
        reduce_dtype: Dtype of the gradient reduce-scatter (default ``param_dtype``).
        cpu_offload: Keep the shards, gradients and optimizer state on the CPU (FSDP's
            ``CPUOffloadPolicy``, pinned when CUDA is available); the optimizer step then runs
            on the CPU. Without CUDA everything is on the CPU already, so it changes nothing.
        reshard_after_forward: Free the gathered parameters after forward (re-gathered in
            backward): less memory, more communication.
        dim: Batch dimension for plain tensors in the inputs.

    Example:
        >>> model = MMFullyShardedDataParallel(model, wrap_modules=['BasicBlock'])
        >>> optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> outputs = model.train_step(data_batch, optimizer)
    """

    def __init__(
        self,
        module: nn.Module,
        wrap_modules: Sequence[str] | None = None,
        param_dtype: DTypeLike = None,
        reduce_dtype: DTypeLike = None,
        cpu_offload: bool = False,
        reshard_after_forward: bool = True,
        dim: int = 0,
    ) -> None:
        super().__init__()
        if not (dist.is_available() and dist.is_initialized()):
            raise RuntimeError(
                "MMFullyShardedDataParallel shards the model over the ranks of the default process"
                " group, which is not initialized; launch with torchrun and --launcher pytorch (or"
                " call mmpar.runner.init_dist first)"
            )
        if isinstance(wrap_modules, str):
            wrap_modules = [wrap_modules]
        fully_shard, _, mixed_precision, cpu_offload_policy = _fsdp_api()
        from torch.distributed.device_mesh import init_device_mesh

        param = _as_dtype(param_dtype, "param_dtype")
        reduce = _as_dtype(reduce_dtype, "reduce_dtype")
        device_type = "cuda" if torch.cuda.is_available() else "cpu"
        if device_type == "cuda" and not cpu_offload:
            module = module.to(torch.device("cuda", torch.cuda.current_device()))
        self.device_type = device_type
        self.dim = dim
        mesh = init_device_mesh(device_type, (dist.get_world_size(),))
        options: dict[str, Any] = dict(mesh=mesh, reshard_after_forward=reshard_after_forward)
        root_options = dict(options)
        if param is not None or reduce is not None:
            options["mp_policy"] = mixed_precision(param_dtype=param, reduce_dtype=reduce)
            # What the root returns (losses, test outputs) is float32, as without mixed
            # precision: evaluation code turns it into NumPy arrays, which have no bfloat16.
            root_options["mp_policy"] = mixed_precision(
                param_dtype=param, reduce_dtype=reduce, output_dtype=torch.float32
            )
        if cpu_offload:
            # Pinned memory needs CUDA; without it the shards stay in ordinary CPU memory.
            options["offload_policy"] = cpu_offload_policy(pin_memory=device_type == "cuda")
            root_options["offload_policy"] = options["offload_policy"]
        for unit in _shard_units(module, wrap_modules or ()):
            fully_shard(unit, **options)
        fully_shard(module, **root_options)
        self.module = module

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """Unwrap DataContainers and call the sharded model."""
        inputs, kwargs, hidden = self._hide_cpu_only(inputs, kwargs)
        inputs, kwargs = self._local_inputs(inputs, kwargs)
        if not hidden:
            return self.module(*inputs, **kwargs)
        with _route_forward(
            self.module, "forward", wrapper=type(self).__name__, unhide_cpu_only=True
        ):
            return self.module(*inputs, **kwargs)

    def _step(self, name: str, inputs: tuple, kwargs: dict) -> Any:
        inputs, kwargs, hidden = self._hide_cpu_only(inputs, kwargs)
        inputs, kwargs = self._local_inputs(inputs, kwargs)
        # Through __call__, so FSDP's root hooks gather the root's parameters for this step.
        with _route_forward(self.module, name, wrapper=type(self).__name__, unhide_cpu_only=hidden):
            return self.module(*inputs, **kwargs)

    def _hide_cpu_only(self, inputs: tuple, kwargs: dict) -> tuple[tuple, dict, bool]:
        # FSDP2's root pre-forward moves the inputs on accelerators only, not on the CPU.
        if self.device_type == "cpu":
            return inputs, kwargs, False
        return hide_cpu_only_inputs(inputs, kwargs)

    def _local_inputs(self, inputs: tuple, kwargs: dict) -> tuple[tuple, dict]:
        device = torch.cuda.current_device() if self.device_type == "cuda" else -1
        return self._one_device_inputs(inputs, kwargs, device)
