"""mmcv 1.x ``mmcv.device.mps``: :class:`MPSDataParallel` on torch's Metal backend."""

from .data_parallel import MPSDataParallel

__all__ = ["MPSDataParallel"]
