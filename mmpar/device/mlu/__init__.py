"""mmcv 1.x ``mmcv.device.mlu``: the names import; mmpar does not ship Cambricon MLU support."""

from .data_parallel import MLUDataParallel
from .distributed import MLUDistributedDataParallel

__all__ = ["MLUDataParallel", "MLUDistributedDataParallel"]
