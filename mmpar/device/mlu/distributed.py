"""MLUDistributedDataParallel (mmcv 1.x): importable; mmpar does not ship Cambricon MLU support."""

from __future__ import annotations

from typing import Any

from mmpar.parallel import MMDistributedDataParallel

from .._unsupported import backend_error

__all__ = ["MLUDistributedDataParallel"]


class MLUDistributedDataParallel(MMDistributedDataParallel):
    """mmcv's MLU DDP wrapper; constructing it raises ``BackendNotSupportedError``.

    Args:
        *args: As mmcv's (DistributedDataParallel's).
        **kwargs: As mmcv's.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise backend_error(
            "MLUDistributedDataParallel",
            "mlu",
            "mmpar.parallel.MMDistributedDataParallel (CUDA with NCCL, or the CPU with gloo)",
        )
