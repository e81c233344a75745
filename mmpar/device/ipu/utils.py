"""mmcv 1.x's ``cfg2options``: importable; mmpar does not ship Graphcore IPU support."""

from __future__ import annotations

from typing import Any

from .._unsupported import backend_error

__all__ = ["cfg2options"]


def cfg2options(cfg: Any) -> Any:
    """The IPU options parser of mmcv; calling it raises ``BackendNotSupportedError``.

    Args:
        cfg: As mmcv's.
    """
    raise backend_error("cfg2options", "ipu", "a CUDA or CPU run (no IPU options)")
