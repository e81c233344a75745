"""MLUDataParallel (mmcv 1.x): importable; mmpar does not ship Cambricon MLU support."""

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.device.mlu.scatter_gather import scatter_kwargs as scatter_kwargs
from mmpar.parallel import MMDataParallel

from .._unsupported import UnsupportedWrapper

__all__ = ["MLUDataParallel"]


class MLUDataParallel(UnsupportedWrapper, MMDataParallel):
    """mmcv's single-MLU wrapper; constructing it raises ``BackendNotSupportedError``."""

    unsupported_backend = "mlu"
    use_instead = "mmpar.parallel.MMDataParallel (CUDA, or device_ids=[-1] for the CPU)"
