"""Which accelerator backends this process can use (mmcv 1.x ``device_type``; imports torch).

Each ``IS_*_AVAILABLE`` flag is computed once, when this module is first imported, by the
matching ``is_*_available()`` function, which asks the backend itself.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import torch


def _optional_module(name: str) -> ModuleType | None:
    """Import ``name`` or return None if it (or something it needs) is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def is_ipu_available() -> bool:
    """Return whether Graphcore's ``poptorch`` is installed and sees IPU hardware."""
    poptorch = _optional_module("poptorch")
    return bool(poptorch is not None and poptorch.ipuHardwareIsAvailable())


def is_mlu_available() -> bool:
    """Return whether this torch build has Cambricon MLU support and a device is present."""
    check = getattr(torch, "is_mlu_available", None)
    return bool(check is not None and check())


def is_mps_available() -> bool:
    """Return whether Apple's Metal (MPS) backend is built into torch and usable."""
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def is_npu_available() -> bool:
    """Return whether Huawei's ``torch_npu`` is installed and an Ascend NPU is present."""
    torch_npu = _optional_module("torch_npu")
    return bool(torch_npu is not None and torch_npu.npu.is_available())


IS_IPU_AVAILABLE: bool = is_ipu_available()
IS_MLU_AVAILABLE: bool = is_mlu_available()
IS_MPS_AVAILABLE: bool = is_mps_available()
IS_NPU_AVAILABLE: bool = is_npu_available()

__all__ = [
    "IS_IPU_AVAILABLE",
    "IS_MLU_AVAILABLE",
    "IS_MPS_AVAILABLE",
    "IS_NPU_AVAILABLE",
    "is_ipu_available",
    "is_mlu_available",
    "is_mps_available",
    "is_npu_available",
]
