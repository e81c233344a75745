"""MPSDataParallel: MMDataParallel on Apple's Metal (MPS) device, through torch's ``mps``."""

from __future__ import annotations

from typing import Any

import torch

from mmpar.parallel import MMDataParallel
from mmpar.parallel.scatter_gather import scatter_kwargs
from mmpar.utils import device_type

__all__ = ["MPSDataParallel"]


class MPSDataParallel(MMDataParallel):
    """:class:`~mmpar.parallel.MMDataParallel` for one Apple-silicon GPU (torch's ``mps``).

    The model must already be on ``'mps'``; each batch (every chunk of ``collate`` merged)
    is copied to it and the model runs once, as MMDataParallel does on one CUDA device.

    Args:
        *args: ``module`` (and anything else MMDataParallel takes, as in mmcv).
        dim: Dim along which plain tensors are split when there are several chunks.
        **kwargs: Passed to MMDataParallel; ``device_ids``/``output_device`` are ignored:
            there is one MPS device.

    Raises:
        RuntimeError: torch's MPS backend is not available in this process.
    """

    def __init__(self, *args: Any, dim: int = 0, **kwargs: Any) -> None:
        if not device_type.is_mps_available():
            raise RuntimeError(
                "MPSDataParallel needs torch's MPS backend (Apple silicon, macOS 12.3+), and "
                "torch.backends.mps.is_available() is False here; use MMDataParallel instead "
                "(device_ids=[-1] for the CPU)"
            )
        kwargs.pop("device_ids", None)
        kwargs.pop("output_device", None)
        # MMDataParallel's CPU set-up: no CUDA replicas; the device is set below.
        super().__init__(*args, device_ids=[-1], dim=dim, **kwargs)
        self.device_ids = [0]
        self.src_device_obj = torch.device("mps", 0)

    def scatter(self, inputs: Any, kwargs: Any, device_ids: Any) -> tuple[tuple, tuple]:
        """Copy the inputs to this wrapper's device (``device_ids`` holds one index)."""
        return scatter_kwargs(inputs, kwargs, [self.src_device_obj], dim=self.dim)
