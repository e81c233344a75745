"""mmcv 1.x ``mmcv.device.mlu.scatter_gather``: CPU targets work; MLU targets are unsupported."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mmpar.parallel import scatter_gather as _parallel
from mmpar.parallel._functions import Scatter as Scatter

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.parallel.data_container import DataContainer as DataContainer

from .._unsupported import backend_error

__all__ = ["scatter", "scatter_kwargs"]


def _check_cpu(target_mlus: Sequence[int], name: str) -> None:
    if list(target_mlus) != [-1]:
        raise backend_error(
            f"{name} to MLU devices", "mlu", "mmpar.parallel.scatter (CUDA or the CPU)"
        )


def scatter(inputs: Any, target_mlus: Sequence[int], dim: int = 0) -> list:
    """Scatter for CPU inference (``target_mlus=[-1]``), as mmcv; MLU targets raise.

    Args:
        inputs: Nested tuples/lists/dicts of DataContainers, tensors and other objects.
        target_mlus: ``[-1]`` (the CPU); MLU indices raise ``BackendNotSupportedError``.
        dim: Dim along which plain tensors are split.

    Returns:
        A list with one copy of ``inputs`` per chunk.
    """
    _check_cpu(target_mlus, "scatter")
    return _parallel.scatter(inputs, [-1], dim)


def scatter_kwargs(
    inputs: Any, kwargs: Any, target_mlus: Sequence[int], dim: int = 0
) -> tuple[tuple, tuple]:
    """Scatter positional and keyword inputs together, as :func:`scatter`.

    Args:
        inputs: Positional arguments (a tuple).
        kwargs: Keyword arguments (a dict) or None.
        target_mlus: As in :func:`scatter`.
        dim: As in :func:`scatter`.

    Returns:
        ``(inputs_per_chunk, kwargs_per_chunk)``, tuples of equal length.
    """
    _check_cpu(target_mlus, "scatter_kwargs")
    return _parallel.scatter_kwargs(inputs, kwargs, [-1], dim)
