"""Whether code runs under ``torch.jit.trace`` (mmcv 1.x ``mmcv.utils.trace``)."""

from __future__ import annotations

import torch

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils.version_utils import digit_version as digit_version


def is_jit_tracing() -> bool:
    """Return True while ``torch.jit.trace`` is recording the calling code."""
    return bool(torch.jit.is_tracing())


__all__ = ["is_jit_tracing"]
