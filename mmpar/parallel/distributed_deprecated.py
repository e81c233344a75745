"""mmcv's deprecated ``MMDistributedDataParallel`` constructor, kept for old scripts.

mmcv 1.x shipped a hand-written DDP here (``module, dim, broadcast_buffers, bucket_cap_mb``).
mmpar gives that constructor the real :class:`mmpar.parallel.MMDistributedDataParallel`
(torch's DDP underneath), so gradients are synchronised as usual; building one warns.
"""

from __future__ import annotations

import warnings

from torch import nn

from .distributed import MMDistributedDataParallel as _MMDistributedDataParallel

__all__ = ["MMDistributedDataParallel"]


class MMDistributedDataParallel(_MMDistributedDataParallel):
    """Deprecated: use :class:`mmpar.parallel.MMDistributedDataParallel`.

    Takes mmcv's deprecated arguments and builds the current wrapper on the device the module
    lives on (``device_ids=[index]`` for a CUDA module, None for a CPU one). A process group
    must be initialised, as for DDP. Construction emits a ``DeprecationWarning``.

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
        device = next((p.device for p in module.parameters()), None)
        device_ids = [device.index] if device is not None and device.type == "cuda" else None
        # Buffers are broadcast by default; newer torch warns when the flag is passed at all.
        extra = {} if broadcast_buffers else {"broadcast_buffers": False}
        super().__init__(
            module, device_ids=device_ids, dim=dim, bucket_cap_mb=bucket_cap_mb, **extra
        )
