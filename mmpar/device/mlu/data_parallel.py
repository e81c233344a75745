"""MLUDataParallel (mmcv 1.x): importable; mmpar does not ship Cambricon MLU support."""

from __future__ import annotations

from typing import Any

from mmpar.parallel import MMDataParallel

from .._unsupported import backend_error

__all__ = ["MLUDataParallel"]


class MLUDataParallel(MMDataParallel):
    """mmcv's single-MLU wrapper; constructing it raises ``BackendNotSupportedError``.

    A subclass of :class:`~mmpar.parallel.MMDataParallel`, so ``isinstance`` checks and
    ``is_module_wrapper`` answer as in mmcv.

    Args:
        *args: As mmcv's (the module, ...).
        dim: As mmcv's.
        **kwargs: As mmcv's.
    """

    def __init__(self, *args: Any, dim: int = 0, **kwargs: Any) -> None:
        raise backend_error(
            "MLUDataParallel",
            "mlu",
            "mmpar.parallel.MMDataParallel (CUDA, or device_ids=[-1] for the CPU)",
        )
