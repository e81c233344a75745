"""mmcv 1.x ``mmcv.device.npu``: the names import; mmpar does not ship Ascend NPU support."""

from .data_parallel import NPUDataParallel
from .distributed import NPUDistributedDataParallel

__all__ = ["NPUDataParallel", "NPUDistributedDataParallel"]
