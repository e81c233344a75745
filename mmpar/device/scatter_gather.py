"""Scatter to the one device :func:`get_device` names (mmcv 1.x ``mmcv.device.scatter_gather``).

mmcv's single-device wrappers (MPS, NPU, MLU) copy the whole batch to their device instead of
splitting it across GPUs. This is :func:`mmpar.parallel.scatter` with every non-CPU target
replaced by that device, so DataContainers (``cpu_only`` ones stay put) are handled in one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Union

import torch

from mmpar.parallel import scatter_gather as _parallel

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.parallel.data_container import DataContainer as DataContainer
from mmpar.utils import deprecated_api_warning

from ._functions import Scatter as Scatter
from .utils import get_device

__all__ = ["scatter", "scatter_kwargs"]

Device = Union[int, str, torch.device]


def _targets(target_devices: Sequence[Device]) -> list:
    if list(target_devices) == [-1]:
        return [-1]  # mmcv's CPU inference: keep everything on the CPU
    kind = get_device()
    return [
        torch.device(kind, t) if isinstance(t, int) and kind != "cpu" else torch.device(kind)
        for t in target_devices
    ]


@deprecated_api_warning({"target_mlus": "target_devices"})
def scatter(inputs: Any, target_devices: Sequence[Device], dim: int = 0) -> list:
    """Copy ``inputs`` to the current device (``[-1]``: keep them on the CPU).

    Args:
        inputs: Nested tuples/lists/dicts of DataContainers, tensors and other objects.
        target_devices: Device indices of the current device type, or ``[-1]`` for the CPU.
        dim: Dim along which plain tensors are split when there are several chunks.

    Returns:
        A list with one copy of ``inputs`` per chunk.
    """
    return _parallel.scatter(inputs, _targets(target_devices), dim)


@deprecated_api_warning({"target_mlus": "target_devices"})
def scatter_kwargs(
    inputs: Any, kwargs: Any, target_devices: Sequence[Device], dim: int = 0
) -> tuple[tuple, tuple]:
    """Scatter positional and keyword inputs together, as :func:`scatter`.

    Args:
        inputs: Positional arguments (a tuple).
        kwargs: Keyword arguments (a dict) or None.
        target_devices: As in :func:`scatter`.
        dim: As in :func:`scatter`.

    Returns:
        ``(inputs_per_chunk, kwargs_per_chunk)``, tuples of equal length.
    """
    return _parallel.scatter_kwargs(inputs, kwargs, _targets(target_devices), dim)
