"""torch classes under mmcv 1.x's ``mmcv.utils.parrots_wrapper`` names (imports torch).

mmcv picked these from parrots or from torch; mmpar runs on torch only, so each name is the
torch class itself. The C++/CUDA extension builders mmcv also exported here are not
provided: importing them raises an ImportError that points at ``torch.utils.cpp_extension``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.conv import _ConvNd, _ConvTransposeMixin
from torch.nn.modules.instancenorm import _InstanceNorm
from torch.nn.modules.pooling import _AdaptiveAvgPoolNd, _AdaptiveMaxPoolNd, _AvgPoolNd, _MaxPoolNd
from torch.utils.data import DataLoader

from .compat_errors import NOT_PROVIDED, not_provided

#: The installed torch's version string.
TORCH_VERSION: str = torch.__version__

#: mmcv's parrots-only pool data loader; under torch it is the plain DataLoader.
PoolDataLoader = DataLoader

#: torch's SyncBatchNorm (mmcv subclassed it only to relax an input check under parrots).
SyncBatchNorm = torch.nn.SyncBatchNorm
#: mmcv's name for the class its SyncBatchNorm derives from.
SyncBatchNorm_ = torch.nn.SyncBatchNorm


def is_cuda_available() -> bool:
    """Return whether torch can use a CUDA (or ROCm) device."""
    return torch.cuda.is_available()


#: Whether CUDA was available when this module was imported.
IS_CUDA_AVAILABLE: bool = is_cuda_available()


def is_rocm_pytorch() -> bool:
    """Return whether torch is a ROCm (HIP) build and a ROCm installation was found."""
    if torch.version.hip is None:
        return False
    try:
        from torch.utils.cpp_extension import ROCM_HOME
    except ImportError:
        return False
    return ROCM_HOME is not None


def get_build_config() -> str:
    """Return torch's build configuration (``torch.__config__.show()``)."""
    return torch.__config__.show()


# mmcv's private getters, which return the classes above as tuples; downstream code imports
# them (mmpose 0.29's datasets/builder.py calls ``_get_dataloader``).
def _get_conv() -> tuple[type, type]:
    return _ConvNd, _ConvTransposeMixin


def _get_dataloader() -> tuple[type, type]:
    return DataLoader, PoolDataLoader


def _get_pool() -> tuple[type, type, type, type]:
    return _AdaptiveAvgPoolNd, _AdaptiveMaxPoolNd, _AvgPoolNd, _MaxPoolNd


def _get_norm() -> tuple[type, type, type]:
    return _BatchNorm, _InstanceNorm, SyncBatchNorm


def __getattr__(name: str) -> Any:
    if name in NOT_PROVIDED:
        raise not_provided(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "IS_CUDA_AVAILABLE",
    "TORCH_VERSION",
    "DataLoader",
    "PoolDataLoader",
    "SyncBatchNorm",
    "_AdaptiveAvgPoolNd",
    "_AdaptiveMaxPoolNd",
    "_AvgPoolNd",
    "_BatchNorm",
    "_ConvNd",
    "_ConvTransposeMixin",
    "_InstanceNorm",
    "_MaxPoolNd",
    "get_build_config",
    "is_cuda_available",
    "is_rocm_pytorch",
]
