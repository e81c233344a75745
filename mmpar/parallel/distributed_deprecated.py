"""mmcv's deprecated ``MMDistributedDataParallel`` constructor, kept for old scripts.

mmcv 1.x shipped a hand-written DDP here (``module, dim, broadcast_buffers, bucket_cap_mb``).
mmpar gives that constructor the real :class:`mmpar.parallel.MMDistributedDataParallel`
(torch's DDP underneath), so gradients are synchronised as usual; building one warns.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch.distributed as dist
from torch import nn

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.parallel.registry import MODULE_WRAPPERS as MODULE_WRAPPERS
from mmpar.parallel.scatter_gather import ScatterInputs as ScatterInputs
from mmpar.parallel.scatter_gather import scatter_kwargs as scatter_kwargs
from mmpar.utils import TORCH_VERSION as TORCH_VERSION
from mmpar.utils import digit_version as digit_version

from .distributed import MMDistributedDataParallel as _MMDistributedDataParallel

__all__ = ["MMDistributedDataParallel"]


class MMDistributedDataParallel(_MMDistributedDataParallel):
    """Deprecated: use :class:`mmpar.parallel.MMDistributedDataParallel`.

    Takes mmcv's deprecated arguments and builds the current wrapper on the device the module
    lives on (``device_ids=[index]`` for a CUDA module, None for a CPU one). Construction
    emits a ``DeprecationWarning``.

    Without a default process group it does what mmcv's constructor did: broadcast rank 0's
    parameters and buffers with ``torch.distributed.broadcast`` (which raises, as in mmcv,
    unless something provides it, as mmcv's tests do by patching it); the wrapper then runs
    the model in this process, with no gradient synchronisation since there is no group.

    Args:
        module: The model, already on its device.
        dim: Dim along which inputs are scattered.
        broadcast_buffers: Broadcast the module's buffers from rank 0 at every forward.
        bucket_cap_mb: Gradient bucket size for the all-reduce, in MiB.
    """

    def __init__(
        self,
        module: nn.Module,
        dim: int = 0,
        broadcast_buffers: bool = True,
        bucket_cap_mb: int = 25,
    ) -> None:
        warnings.warn(
            "mmpar.parallel.distributed_deprecated.MMDistributedDataParallel is deprecated; "
            "use mmpar.parallel.MMDistributedDataParallel(module, device_ids=[local_rank]) "
            "(device_ids=None on CPU)",
            DeprecationWarning,
            stacklevel=2,
        )
        if not (dist.is_available() and dist.is_initialized()):
            self._init_without_group(module, dim, broadcast_buffers)
            return
        device = next((p.device for p in module.parameters()), None)
        device_ids = [device.index] if device is not None and device.type == "cuda" else None
        # Buffers are broadcast by default; newer torch warns when the flag is passed at all.
        extra = {} if broadcast_buffers else {"broadcast_buffers": False}
        super().__init__(
            module, device_ids=device_ids, dim=dim, bucket_cap_mb=bucket_cap_mb, **extra
        )

    def _init_without_group(self, module: nn.Module, dim: int, broadcast_buffers: bool) -> None:
        nn.Module.__init__(self)  # no DDP state: DDP needs a process group
        self.module = module
        self.dim = dim
        self.device_ids = None
        self.broadcast_buffers = broadcast_buffers
        self._without_group = True
        tensors = list(module.state_dict().values())
        if broadcast_buffers:
            tensors += [b.data for b in module.buffers()]
        for tensor in tensors:
            dist.broadcast(tensor, 0)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """DDP's forward, or (no process group) the model's ``forward`` on local inputs."""
        if not self.__dict__.get("_without_group"):
            return super().forward(*inputs, **kwargs)
        inputs, kwargs = self._local_inputs(inputs, kwargs)
        return self.module(*inputs, **kwargs)

    def _step(self, name: str, inputs: tuple, kwargs: dict) -> Any:
        if not self.__dict__.get("_without_group"):
            return super()._step(name, inputs, kwargs)
        inputs, kwargs = self._local_inputs(inputs, kwargs)
        return getattr(self.module, name)(*inputs, **kwargs)
