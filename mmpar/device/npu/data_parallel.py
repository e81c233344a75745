"""NPUDataParallel (mmcv 1.x): importable; mmpar does not ship Ascend NPU support."""

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.device.scatter_gather import scatter_kwargs as scatter_kwargs
from mmpar.parallel import MMDataParallel

from .._unsupported import UnsupportedWrapper

__all__ = ["NPUDataParallel"]


class NPUDataParallel(UnsupportedWrapper, MMDataParallel):
    """mmcv's single-NPU wrapper; constructing it raises ``BackendNotSupportedError``."""

    unsupported_backend = "npu"
    use_instead = "mmpar.parallel.MMDataParallel (CUDA, or device_ids=[-1] for the CPU)"
