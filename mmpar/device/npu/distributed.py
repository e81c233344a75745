"""NPUDistributedDataParallel (mmcv 1.x): importable; mmpar does not ship Ascend NPU support."""

from mmpar.parallel import MMDistributedDataParallel

from .._unsupported import UnsupportedWrapper

__all__ = ["NPUDistributedDataParallel"]


class NPUDistributedDataParallel(UnsupportedWrapper, MMDistributedDataParallel):
    """mmcv's NPU DDP wrapper; constructing it raises ``BackendNotSupportedError``."""

    unsupported_backend = "npu"
    use_instead = "mmpar.parallel.MMDistributedDataParallel (CUDA with NCCL, or the CPU with gloo)"
