"""Facts about the environment, for logs and bug reports (mmcv 1.x ``collect_env``)."""

from __future__ import annotations

import os.path as osp
import platform
import subprocess
import sys
import sysconfig
from collections import defaultdict
from typing import Any


def collect_env() -> dict[str, Any]:
    """Return versions and devices under mmcv 1.7.2's key names, then mmpar's own.

    mmcv's keys, in mmcv's order: ``'sys.platform'``, ``'Python'``, ``'CUDA available'``;
    with CUDA ``'GPU i,j'`` (devices grouped by name), ``'CUDA_HOME'`` and, when that
    directory exists, ``'NVCC'``; ``'GCC'`` (the first line of the C compiler's
    ``--version``, ``'n/a'`` without one), ``'PyTorch'``, ``'PyTorch compiling details'``,
    ``'TorchVision'`` (left out when it is not installed, as in mmcv), ``'OpenCV'``,
    ``'MMCV'`` (the mmcv version mmpar stands in for, what ``mmcv.__version__`` reports),
    ``'MMCV Compiler'`` and ``'MMCV CUDA Compiler'`` (``'n/a'``: mmpar compiles no ops, as a
    build of mmcv without ops reports). mmpar adds ``'CUDA'`` and ``'cuDNN'`` (with CUDA),
    ``'platform'``, ``'NumPy'`` and ``'mmpar'`` (mmpar's own version).
    """
    import numpy as np
    import torch

    from mmpar.version import __version__, mmcv_version

    env: dict[str, Any] = {
        "sys.platform": sys.platform,
        "Python": sys.version.replace("\n", ""),
    }
    cuda_available = torch.cuda.is_available()
    env["CUDA available"] = cuda_available
    if cuda_available:
        devices = defaultdict(list)
        for index in range(torch.cuda.device_count()):
            devices[torch.cuda.get_device_name(index)].append(str(index))
        for name, indices in devices.items():
            env[f"GPU {','.join(indices)}"] = name
        env.update(_cuda_toolkit())
        env["CUDA"] = torch.version.cuda
        env["cuDNN"] = torch.backends.cudnn.version()
    env["GCC"] = _compiler_version()
    env["PyTorch"] = torch.__version__
    env["PyTorch compiling details"] = torch.__config__.show()
    torchvision_version = _torchvision_version()
    if torchvision_version is not None:
        env["TorchVision"] = torchvision_version
    env["OpenCV"] = _opencv_version()
    env["MMCV"] = mmcv_version
    env["MMCV Compiler"] = "n/a"
    env["MMCV CUDA Compiler"] = "n/a"
    env["platform"] = platform.platform()
    env["NumPy"] = np.__version__
    env["mmpar"] = __version__
    return env


def _first_line(command: list[str]) -> str | None:
    """The first non-empty line a command prints, or None if it cannot run or fails."""
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [line.strip() for line in out.stdout.splitlines() if line.strip()]
    return lines[0] if lines else None


def _compiler_version() -> str:
    """The first line of ``<CC> --version`` for the compiler Python was built with, or 'n/a'."""
    cc = sysconfig.get_config_var("CC")
    if not cc:
        return "n/a"
    return _first_line([osp.basename(cc.split()[0]), "--version"]) or "n/a"


def _cuda_toolkit() -> dict[str, Any]:
    """``CUDA_HOME`` as torch finds it and, if the directory exists, nvcc's release line."""
    from torch.utils.cpp_extension import CUDA_HOME

    info: dict[str, Any] = {"CUDA_HOME": CUDA_HOME}
    if CUDA_HOME is not None and osp.isdir(CUDA_HOME):
        try:
            out = subprocess.run(
                [osp.join(CUDA_HOME, "bin", "nvcc"), "-V"],
                capture_output=True,
                text=True,
                timeout=30,
                check=True,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            info["NVCC"] = "Not Available"
        else:
            release = [line for line in out.splitlines() if "Cuda compilation tools" in line]
            info["NVCC"] = release[0].strip() if release else out.strip()
    return info


def _torchvision_version() -> str | None:
    """Return torchvision's version (None if absent), not importing it if not yet loaded.

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
        return None


def _opencv_version() -> str:
    # cv2.__version__ (what mmcv reports) is not the distribution's version (5.0.0 vs
    # 5.0.0.93), so cv2 is imported; it is cheap, unlike torchvision.
    try:
        import cv2
    except ImportError:
        return "not installed"
    return str(cv2.__version__)


def __getattr__(name: str) -> Any:
    # mmcv's module imports get_build_config; served lazily so importing this stays torch-free.
    if name == "get_build_config":
        from .parrots_wrapper import get_build_config

        return get_build_config
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
