"""mmcv 1.x's ``ipu_model_wrapper``: importable; mmpar does not ship Graphcore IPU support."""

from __future__ import annotations

from typing import Any

from .._unsupported import backend_error

__all__ = ["ipu_model_wrapper"]


def ipu_model_wrapper(
    model: Any,
    options: Any,
    optimizer: Any = None,
    logger: Any = None,
    modules_to_record: Any = None,
    ipu_model_cfg: Any = None,
    fp16_cfg: Any = None,
) -> Any:
    """The IPU model wrapper of mmcv; calling it raises ``BackendNotSupportedError``.

    Args:
        model: As mmcv's.
        options: As mmcv's.
        optimizer: As mmcv's.
        logger: As mmcv's.
        modules_to_record: As mmcv's.
        ipu_model_cfg: As mmcv's.
        fp16_cfg: As mmcv's.
    """
    raise backend_error(
        "ipu_model_wrapper", "ipu", "mmpar.parallel.MMDataParallel (CUDA or the CPU)"
    )
