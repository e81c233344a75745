"""NPUDistributedDataParallel (mmcv 1.x): importable; mmpar does not ship Ascend NPU support."""

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.device.scatter_gather import scatter_kwargs as scatter_kwargs
from mmpar.parallel import MMDistributedDataParallel

from .._unsupported import UnsupportedWrapper

__all__ = ["NPUDistributedDataParallel"]


class NPUDistributedDataParallel(UnsupportedWrapper, MMDistributedDataParallel):
    """mmcv's NPU DDP wrapper; constructing it raises ``BackendNotSupportedError``."""

    unsupported_backend = "npu"
    use_instead = "mmpar.parallel.MMDistributedDataParallel (CUDA with NCCL, or the CPU with gloo)"
