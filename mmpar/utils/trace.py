"""Whether code runs under ``torch.jit.trace`` (mmcv 1.x ``mmcv.utils.trace``)."""

from __future__ import annotations

import torch


def is_jit_tracing() -> bool:
    """Return True while ``torch.jit.trace`` is recording the calling code."""
    return bool(torch.jit.is_tracing())


__all__ = ["is_jit_tracing"]
