"""MLUDistributedDataParallel (mmcv 1.x): importable; mmpar does not ship Cambricon MLU support."""

from mmpar.parallel import MMDistributedDataParallel

from .._unsupported import UnsupportedWrapper

__all__ = ["MLUDistributedDataParallel"]


class MLUDistributedDataParallel(UnsupportedWrapper, MMDistributedDataParallel):
    """mmcv's MLU DDP wrapper; constructing it raises ``BackendNotSupportedError``."""

    unsupported_backend = "mlu"
    use_instead = "mmpar.parallel.MMDistributedDataParallel (CUDA with NCCL, or the CPU with gloo)"
