"""Build information that mmcv-full reported about its compiled extension.

mmpar compiles nothing; these answer what a CPU-only mmcv without the extension would, so
environment reports (``collect_env``) and mmdet's ONNX helpers keep working.
"""

from __future__ import annotations

__all__ = ["get_compiler_version", "get_compiling_cuda_version", "get_onnxruntime_op_path"]


def get_compiler_version() -> str:
    """Return ``'n/a'``: mmpar's ops are not compiled (torch's build is in ``torch.__config__``).

    Returns:
        ``'n/a'``.
    """
    return "n/a"


def get_compiling_cuda_version() -> str:
    """Return ``'not available'``, mmcv's answer when its ops were built without CUDA.

    Returns:
        ``'not available'``.
    """
    return "not available"


def get_onnxruntime_op_path() -> str:
    """Return ``''``: there is no library of ONNX Runtime custom ops (mmcv's answer without one).

    Returns:
        ``''``.
    """
    return ""
