"""``get_device``: the accelerator this process trains on (mmcv 1.x ``mmcv.device.utils``)."""

from __future__ import annotations

# Bound here under mmcv's names (as in mmcv), so tests and users can patch
# ``mmpar.device.utils.IS_*_AVAILABLE``; the checks themselves live in mmpar.utils.device_type.
from mmpar.utils import IS_CUDA_AVAILABLE, IS_MLU_AVAILABLE, IS_MPS_AVAILABLE, IS_NPU_AVAILABLE

__all__ = ["get_device"]


def get_device() -> str:
    """Return the device type to use: ``'npu'``, ``'cuda'``, ``'mlu'``, ``'mps'`` or ``'cpu'``.

    NPU is asked first, as in mmcv: ``torch_npu`` makes the CUDA checks answer for the NPU.
    """
    if IS_NPU_AVAILABLE:
        return "npu"
    if IS_CUDA_AVAILABLE:
        return "cuda"
    if IS_MLU_AVAILABLE:
        return "mlu"
    if IS_MPS_AVAILABLE:
        return "mps"
    return "cpu"
