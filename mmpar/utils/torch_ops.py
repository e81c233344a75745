"""torch operations whose call differs across torch versions (mmcv 1.x ``torch_ops``)."""

from __future__ import annotations

import torch

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils.parrots_wrapper import TORCH_VERSION as TORCH_VERSION
from mmpar.utils.version_utils import digit_version as digit_version


def torch_meshgrid(*tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Return ``torch.meshgrid(*tensors, indexing='ij')`` (matrix indexing, no warning).

    Args:
        *tensors: Scalars or 1-D tensors (or one list of them).

    Returns:
        One tensor per input, each of shape ``(len(t0), len(t1), ...)``.
    """
    return torch.meshgrid(*tensors, indexing="ij")


__all__ = ["torch_meshgrid"]
