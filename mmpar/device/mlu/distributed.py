"""MLUDistributedDataParallel (mmcv 1.x): importable; mmpar does not ship Cambricon MLU support."""

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.device.mlu.scatter_gather import scatter_kwargs as scatter_kwargs
from mmpar.parallel import MMDistributedDataParallel

from .._unsupported import UnsupportedWrapper

__all__ = ["MLUDistributedDataParallel"]


class MLUDistributedDataParallel(UnsupportedWrapper, MMDistributedDataParallel):
    """mmcv's MLU DDP wrapper; constructing it raises ``BackendNotSupportedError``."""

    unsupported_backend = "mlu"
    use_instead = "mmpar.parallel.MMDistributedDataParallel (CUDA with NCCL, or the CPU with gloo)"
