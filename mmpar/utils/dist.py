"""Distributed helpers every layer may use: rank/world size, rank-0-only calls, collectives.

They work with or without an initialized default process group (``(0, 1)``, a no-op or the
input unchanged without one). Process-group set-up lives in :mod:`mmpar.runner.dist_utils`,
which re-exports these names at their mmcv path. Importing this module imports torch, so
``mmpar.utils`` does not import it eagerly.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any, Callable, TypeVar

import torch
import torch.distributed as dist

__all__ = [
    "all_reduce_dict",
    "allreduce_grads",
    "allreduce_params",
    "barrier",
    "broadcast_object",
    "collect_results",
    "gather_object",
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


def gather_object(obj: Any, dst: int = 0) -> list | None:
    """Every rank's ``obj`` (picklable), in rank order, on rank ``dst``; None on the others.

    Without a process group: ``[obj]``.
    """
    if not is_distributed():
        return [obj]
    rank, world_size = get_dist_info()
    gathered: list | None = [None] * world_size if rank == dst else None
    dist.gather_object(obj, gathered, dst=dst)
    return gathered


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


def _average_(tensors: list[torch.Tensor], world_size: int) -> None:
    """Replace each summed tensor by its mean over ranks, in place (integers round down)."""
    for t in tensors:
        if t.is_floating_point() or t.is_complex():
            t.div_(world_size)
        else:
            t.floor_divide_(world_size)


def _buckets(tensors: list[torch.Tensor], bucket_bytes: int) -> list[list[torch.Tensor]]:
    """Group tensors by dtype and device (first-seen order), each group cut at ``bucket_bytes``.

    ``bucket_bytes <= 0`` means one bucket per dtype/device. A tensor larger than the bucket
    size gets a bucket of its own.
    """
    groups: dict[tuple, list[list[torch.Tensor]]] = {}
    sizes: dict[tuple, int] = {}
    for t in tensors:
        key = (t.dtype, t.device)
        nbytes = t.numel() * t.element_size()
        if key not in groups or (bucket_bytes > 0 and sizes[key] + nbytes > bucket_bytes):
            groups.setdefault(key, []).append([])
            sizes[key] = 0
        groups[key][-1].append(t)
        sizes[key] += nbytes
    return [bucket for buckets in groups.values() for bucket in buckets if bucket]


def _allreduce_mean(tensors: list[torch.Tensor], coalesce: bool, bucket_size_mb: int) -> None:
    if not is_distributed() or not tensors:
        return
    world_size = dist.get_world_size()
    reducible = [t for t in tensors if t.dtype is not torch.bool]
    if not coalesce:
        for t in reducible:
            dist.all_reduce(t)
        _average_(reducible, world_size)
        return
    bucket_bytes = bucket_size_mb * 1024 * 1024 if bucket_size_mb > 0 else 0
    for bucket in _buckets(reducible, bucket_bytes):
        flat = torch.cat([t.reshape(-1) for t in bucket])
        dist.all_reduce(flat)
        _average_([flat], world_size)
        for t, part in zip(bucket, flat.split([t.numel() for t in bucket])):
            t.copy_(part.view_as(t))


def allreduce_params(
    params: Iterable[torch.Tensor], coalesce: bool = True, bucket_size_mb: int = -1
) -> None:
    """Average parameters or buffers over all ranks, in place (mmcv 1.x API).

    Every rank must call it with the same tensors in the same order. Integer tensors (e.g.
    BatchNorm's ``num_batches_tracked``) get the floor of the mean; bool tensors are left as
    they are. Does nothing when not distributed.

    Args:
        params: Parameters or buffers (e.g. ``model.buffers()``); their data is overwritten.
        coalesce: Reduce flattened buckets (few collectives) instead of one tensor at a time.
        bucket_size_mb: Bucket size in MiB when coalescing; ``<= 0``: one bucket per
            dtype and device.
    """
    with torch.no_grad():
        _allreduce_mean([p.data for p in params], coalesce, bucket_size_mb)


def allreduce_grads(
    params: Iterable[torch.nn.Parameter], coalesce: bool = True, bucket_size_mb: int = -1
) -> None:
    """Average the gradients of ``params`` over all ranks, in place (mmcv 1.x API).

    Parameters without a gradient or with ``requires_grad=False`` are skipped, so every rank
    must have gradients for the same parameters. Does nothing when not distributed.

    Args:
        params: Parameters (e.g. ``model.parameters()``).
        coalesce: Reduce flattened buckets (few collectives) instead of one tensor at a time.
        bucket_size_mb: Bucket size in MiB when coalescing; ``<= 0``: one bucket per
            dtype and device.
    """
    grads = [p.grad.data for p in params if p.requires_grad and p.grad is not None]
    with torch.no_grad():
        _allreduce_mean(grads, coalesce, bucket_size_mb)
