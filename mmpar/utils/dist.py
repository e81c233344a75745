"""Distributed helpers every layer may use: rank/world size, rank-0-only calls, collectives.

They work with or without an initialized default process group (``(0, 1)``, a no-op or the
input unchanged without one). Process-group set-up lives in :mod:`mmpar.runner.dist_utils`,
which re-exports these names at their mmcv path. Importing this module imports torch, so
``mmpar.utils`` does not import it eagerly.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Callable, TypeVar

import torch
import torch.distributed as dist

__all__ = [
    "all_reduce_dict",
    "barrier",
    "broadcast_object",
    "collect_results",
    "get_dist_info",
    "is_distributed",
    "master_only",
]

F = TypeVar("F", bound=Callable[..., Any])


def is_distributed() -> bool:
    """Return True when torch.distributed is available and its default group is initialized."""
    return dist.is_available() and dist.is_initialized()


def get_dist_info() -> tuple[int, int]:
    """Return ``(rank, world_size)``; ``(0, 1)`` when not distributed."""
    if is_distributed():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def master_only(func: F) -> F:
    """Decorate ``func`` so it only runs on rank 0 (other ranks get None)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        rank, _ = get_dist_info()
        if rank == 0:
            return func(*args, **kwargs)
        return None

    return wrapper  # type: ignore[return-value]


def barrier() -> None:
    """Synchronize all ranks; a no-op when not distributed."""
    if is_distributed():
        dist.barrier()


def comm_device() -> torch.device:
    """The device of tensors for the default group's collectives (call it when distributed).

    nccl only reduces CUDA tensors (this process's current device); gloo and the others work on
    CPU tensors.
    """
    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def all_reduce_dict(data: Mapping[str, Any], op: str = "mean") -> dict[str, Any]:
    """Reduce a dict of tensors (or numbers) across ranks, key by key.

    Args:
        data: Same keys on every rank; values are tensors or Python numbers.
        op: ``'mean'`` or ``'sum'``.

    Returns:
        A new dict with reduced values (tensors keep their device and dtype where possible;
        numbers come back as floats). The input itself when not distributed.

    Raises:
        ValueError: Unknown ``op``.
    """
    if op not in ("mean", "sum"):
        raise ValueError(f"all_reduce_dict: op must be 'mean' or 'sum', got {op!r}")
    if not is_distributed():
        return dict(data)
    world_size = dist.get_world_size()
    device = comm_device()
    out: dict[str, Any] = {}
    for key in sorted(data):  # same order on every rank
        value = data[key]
        is_tensor = isinstance(value, torch.Tensor)
        t = value.detach() if is_tensor else torch.tensor(float(value), dtype=torch.float64)
        buf = t.to(device).clone()
        if op == "mean" and not buf.is_floating_point():
            buf = buf.double()
        dist.all_reduce(buf, op=dist.ReduceOp.SUM)
        if op == "mean":
            buf = buf / world_size
        out[key] = buf.to(value.device) if is_tensor else float(buf)
    return {k: out[k] for k in data}


def broadcast_object(obj: Any, src: int = 0) -> Any:
    """Return ``src``'s ``obj`` on every rank (picklable objects); ``obj`` when not distributed."""
    if not is_distributed():
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=src, device=comm_device())
    return box[0]


def collect_results(results: list, size: int) -> list | None:
    """Collect per-sample results of all ranks on rank 0 in dataset order.

    The distributed sampler gives rank ``r`` the indices ``r, r + W, r + 2W, ...`` (``W`` the
    world size) and pads the last round by repeating samples; this interleaves the ranks' lists
    back and truncates to ``size`` to drop the padding. Objects travel with
    ``torch.distributed.gather_object``, so no shared directory is needed (works across nodes).

    Args:
        results: This rank's results, one per sample, in the order the sampler yielded them.
        size: Number of samples in the dataset.

    Returns:
        On rank 0, the ``size`` results in dataset order; None on other ranks. When not
        distributed, ``results[:size]``.

    Raises:
        ValueError: The ranks together returned fewer than ``size`` results.
    """
    if not is_distributed():
        parts = [list(results)]
        rank = 0
    else:
        rank, world_size = dist.get_rank(), dist.get_world_size()
        gathered: list | None = [None] * world_size if rank == 0 else None
        dist.gather_object(list(results), gathered, dst=0)
        if rank != 0:
            return None
        parts = gathered  # type: ignore[assignment]
    ordered = []
    for i in range(max(len(p) for p in parts)):
        ordered.extend(p[i] for p in parts if i < len(p))
    if len(ordered) < size:
        raise ValueError(
            f"collect_results: got {len(ordered)} results from {len(parts)} rank(s) but the "
            f"dataset has {size} samples; each rank must return one result per sample it was given"
        )
    return ordered[:size]
