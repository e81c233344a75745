"""Facts about the environment, for logs and bug reports."""

from __future__ import annotations

import platform
import sys
from collections import defaultdict
from typing import Any


def collect_env() -> dict[str, Any]:
    """Return versions and devices: Python, platform, PyTorch, CUDA, GPUs, NumPy, mmpar.

    Keys: ``'sys.platform'``, ``'Python'``, ``'platform'``, ``'CUDA available'``, and with
    CUDA ``'GPU i,j'`` (devices grouped by name), ``'CUDA'``, ``'cuDNN'``; then
    ``'PyTorch'``, ``'TorchVision'`` (``'not installed'`` if missing), ``'NumPy'``, ``'mmpar'``.
    """
    import numpy as np
    import torch

    from mmpar.version import __version__

    env: dict[str, Any] = {
        "sys.platform": sys.platform,
        "Python": sys.version.replace("\n", ""),
        "platform": platform.platform(),
    }
    cuda_available = torch.cuda.is_available()
    env["CUDA available"] = cuda_available
    if cuda_available:
        devices = defaultdict(list)
        for index in range(torch.cuda.device_count()):
            devices[torch.cuda.get_device_name(index)].append(str(index))
        for name, indices in devices.items():
            env[f"GPU {','.join(indices)}"] = name
        env["CUDA"] = torch.version.cuda
        env["cuDNN"] = torch.backends.cudnn.version()
    env["PyTorch"] = torch.__version__
    env["TorchVision"] = _torchvision_version()
    env["NumPy"] = np.__version__
    env["mmpar"] = __version__
    return env


def _torchvision_version() -> str:
    """Return the version of torchvision, without importing it if it is not loaded yet.

    Importing torchvision pulls in ``torch._dynamo`` (seconds per process start), so the
    installed distribution's metadata is read instead.
    """
    module = sys.modules.get("torchvision")
    if module is not None:
        return str(module.__version__)
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("torchvision")
    except PackageNotFoundError:
        return "not installed"
