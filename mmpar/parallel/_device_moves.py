"""Where a device argument points, and moving one tensor there (scatter's and Scatter's rule)."""

from __future__ import annotations

from typing import Union

import torch

#: A device as mmcv's parallel code takes it: a GPU id (-1: the CPU), a name, or a device.
Device = Union[int, str, torch.device]

CPU = torch.device("cpu")


def dev(target: Device | None) -> torch.device:
    """The device ``target`` names (None: the CPU; a negative id: the CPU)."""
    if target is None:
        return torch.device("cpu")
    if isinstance(target, torch.device):
        return target
    if isinstance(target, int):
        return CPU if target < 0 else torch.device("cuda", target)
    return torch.device(target)


def to_device(tensor: torch.Tensor, device: torch.device) -> torch.Tensor:
    """``tensor`` on ``device``; to CUDA through pinned memory with ``non_blocking=True``."""
    if tensor.device == device:
        return tensor
    if device.type == "cuda":
        # Pinned host memory makes the copy truly asynchronous; tensors from a DataLoader with
        # pin_memory=True are pinned already and are not copied twice.
        if tensor.device.type == "cpu" and not tensor.is_pinned():
            tensor = tensor.pin_memory()
        return tensor.to(device, non_blocking=True)
    return tensor.to(device)
