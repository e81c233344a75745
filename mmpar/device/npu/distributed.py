"""NPUDistributedDataParallel (mmcv 1.x): importable; mmpar does not ship Ascend NPU support."""

from __future__ import annotations

from typing import Any

from mmpar.parallel import MMDistributedDataParallel

from .._unsupported import backend_error

__all__ = ["NPUDistributedDataParallel"]


class NPUDistributedDataParallel(MMDistributedDataParallel):
    """mmcv's NPU DDP wrapper; constructing it raises ``BackendNotSupportedError``.

    Args:
        *args: As mmcv's (DistributedDataParallel's).
        **kwargs: As mmcv's.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise backend_error(
            "NPUDistributedDataParallel",
            "npu",
            "mmpar.parallel.MMDistributedDataParallel (CUDA with NCCL, or the CPU with gloo)",
        )
