"""mmcv 1.x's ``mmcv.device._functions``: copy tensors to the device :func:`get_device` names.

A private module of mmcv that its device scatter is built on; kept because code imports
``Scatter`` and ``scatter`` from it. ``devices=[-1]`` keeps tensors where they are (CPU).
"""

from __future__ import annotations

from typing import Union

import torch

from mmpar.utils import deprecated_api_warning

from .utils import get_device

TensorOrList = Union[torch.Tensor, list]


def scatter(input: TensorOrList, devices: list) -> TensorOrList:
    """Copy a tensor (or each tensor of a list) to the current device; ``[-1]`` keeps it.

    Raises:
        TypeError: ``input`` is neither a tensor nor a list (mmcv raised a bare Exception).
    """
    if isinstance(input, list):
        return [scatter(item, devices) for item in input]
    if not isinstance(input, torch.Tensor):
        raise TypeError(f"scatter: input must be a tensor or a list, got {type(input).__name__}")
    output = input.contiguous()
    return output if devices == [-1] else output.to(get_device())


class Scatter:
    """mmcv's device ``Scatter``: :func:`scatter` whose result is always a tuple."""

    @staticmethod
    @deprecated_api_warning({"target_mlus": "target_devices"}, cls_name="Scatter")
    def forward(target_devices: list, input: TensorOrList) -> tuple:
        """Scatter ``input`` to ``target_devices``; a tuple of the outputs."""
        outputs = scatter(input, target_devices)
        return tuple(outputs) if isinstance(outputs, list) else (outputs,)


__all__ = ["Scatter", "scatter"]
