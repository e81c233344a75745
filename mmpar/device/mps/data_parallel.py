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
        *args: ``module`` (then ``device_ids``, ``output_device``), as MMDataParallel's.
        dim: Dim along which plain tensors are split when there are several chunks.
        **kwargs: ``module``, ``device_ids``, ``output_device`` by name; the last two are
            ignored: there is one MPS device.

    Raises:
        RuntimeError: torch's MPS backend is not available in this process.
        TypeError: No module, or arguments MMDataParallel does not take.
    """

    def __init__(self, *args: Any, dim: int = 0, **kwargs: Any) -> None:
        if not device_type.is_mps_available():
            raise RuntimeError(
                "MPSDataParallel needs torch's MPS backend (Apple silicon, macOS 12.3+), and "
                "torch.backends.mps.is_available() is False here; use MMDataParallel instead "
                "(device_ids=[-1] for the CPU)"
            )
        # MMDataParallel's arguments, positional or keyword; there is one MPS device, so
        # device_ids and output_device are accepted and ignored.
        given = dict(zip(("module", "device_ids", "output_device"), args))
        overlap = set(given) & set(kwargs)
        if overlap or len(args) > 3:
            raise TypeError(
                f"MPSDataParallel takes module, device_ids, output_device and dim=; got "
                f"{len(args)} positional arguments and keywords {sorted(kwargs)}"
            )
        given.update(kwargs)
        if "module" not in given:
            raise TypeError("MPSDataParallel() missing the module to wrap")
        module = given.pop("module")
        unknown = sorted(set(given) - {"device_ids", "output_device"})
        if unknown:
            raise TypeError(f"MPSDataParallel() got unexpected keyword arguments {unknown}")
        # MMDataParallel's CPU set-up: no CUDA replicas; the device is set below.
        super().__init__(module, device_ids=[-1], dim=dim)
        self.device_ids = [0]
        self.src_device_obj = torch.device("mps", 0)

    def scatter(self, inputs: Any, kwargs: Any, device_ids: Any) -> tuple[tuple, tuple]:
        """Copy the inputs to this wrapper's device (``device_ids`` holds one index)."""
        return scatter_kwargs(inputs, kwargs, [self.src_device_obj], dim=self.dim)
