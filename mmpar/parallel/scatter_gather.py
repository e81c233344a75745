"""Move collated batches to devices (``scatter``) and merge per-device outputs (``gather``).

Pure recursive functions over tuples, lists and dicts, like torch's ``scatter_gather``, but
DataContainer-aware: chunk ``i`` of every DataContainer goes to device ``target_gpus[i]``, and
plain fields (what ``collate`` stacked whole) are split into the same chunks.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any, Callable, Union

import torch

from ._device_moves import CPU as _CPU
from ._device_moves import Device
from ._device_moves import dev as _dev
from ._device_moves import to_device as _to_device
from ._functions import Scatter as Scatter  # mmcv's module imports it too
from .data_container import DataContainer

__all__ = ["ScatterInputs", "gather", "scatter", "scatter_kwargs"]

Merge = Callable[[DataContainer], DataContainer]

#: What :func:`scatter` accepts (mmcv's name): tensors, DataContainers and nests of them.
ScatterInputs = Union[torch.Tensor, DataContainer, tuple, list, dict]


def _is_cpu_target(target_gpus: Sequence[Device] | None) -> bool:
    if target_gpus is None or len(target_gpus) == 0:
        return True
    return all(_dev(g).type == "cpu" for g in target_gpus)


def _move(obj: Any, device: torch.device) -> Any:
    """Move every tensor inside ``obj`` (lists, tuples, dicts) to ``device``."""
    if isinstance(obj, torch.Tensor):
        return _to_device(obj, device)
    if isinstance(obj, tuple):
        return tuple(_move(o, device) for o in obj)
    if isinstance(obj, list):
        return [_move(o, device) for o in obj]
    if isinstance(obj, dict):
        return _rebuild_dict(obj, ((k, _move(v, device)) for k, v in obj.items()))
    return obj


def _rebuild_dict(like: dict, items: Any) -> dict:
    try:
        return type(like)(items)
    except TypeError:  # dict subclasses with other constructors (defaultdict, ...)
        return dict(items)


def _walk(obj: Any, path: str):
    """Yield ``(path, leaf)`` for DataContainers and tensors inside ``obj``."""
    if isinstance(obj, (DataContainer, torch.Tensor)):
        yield path, obj
    elif isinstance(obj, (tuple, list)):
        for i, o in enumerate(obj):
            yield from _walk(o, f"{path}[{i}]")
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(v, f"{path}[{k!r}]")


def _chunk_sizes(leaf: DataContainer) -> list[int] | None:
    """Samples per chunk of a collated DataContainer (None if its chunks do not say)."""
    sizes = []
    for chunk in leaf.data:
        if isinstance(chunk, torch.Tensor) and chunk.dim() > 0:
            sizes.append(chunk.shape[0])
        elif isinstance(chunk, (list, tuple)):
            sizes.append(len(chunk))
        else:
            return None
    return sizes


def _even_sizes(total: int, n: int) -> list[int]:
    """How ``torch.tensor_split`` cuts ``total`` rows into ``n`` pieces."""
    q, r = divmod(total, n)
    return [q + 1] * r + [q] * (n - r)


def _plan(
    objs: Sequence[Any], target_gpus: Sequence[Device] | None, dim: int
) -> tuple[int, list[int] | None]:
    """Decide how many per-device copies scatter makes for ``objs`` (inputs, kwargs).

    Returns the number of copies and, when known, the number of samples in each: the chunk
    sizes of the collated DataContainers, else the even split of the plain tensors' rows.
    """
    cpu = _is_cpu_target(target_gpus)
    n_dc: int | None = None
    sizes: list[int] | None = None
    dc_path = ""
    min_len: int | None = None
    for root, obj in zip(("inputs", "kwargs"), objs):
        for path, leaf in _walk(obj, root):
            if isinstance(leaf, DataContainer):
                if not isinstance(leaf.data, list):
                    raise TypeError(
                        f"scatter: DataContainer at {path} holds a {type(leaf.data).__name__}, "
                        f"not a list of per-device chunks; batch samples with "
                        f"mmpar.parallel.collate first"
                    )
                if n_dc is None:
                    n_dc, dc_path = len(leaf.data), path
                elif len(leaf.data) != n_dc:
                    raise ValueError(
                        f"scatter: DataContainer at {dc_path} has {n_dc} chunks but the one at "
                        f"{path} has {len(leaf.data)}; all fields must come from one collate call"
                    )
                if sizes is None:
                    sizes = _chunk_sizes(leaf)
            elif leaf.dim() > 0:
                size = leaf.shape[dim]
                min_len = size if min_len is None else min(min_len, size)
    if n_dc is not None:
        if not cpu and n_dc > len(target_gpus):
            raise ValueError(
                f"scatter: the batch has {n_dc} device chunks but only {len(target_gpus)} target "
                f"GPUs {list(target_gpus)}; set samples_per_gpu = batch size / number of GPUs"
            )
        return max(n_dc, 1), sizes
    # No DataContainers: split plain tensors over the target devices (several CPU entries,
    # e.g. [-1, -1], count as several devices), never into more pieces than rows.
    n = len(target_gpus) if target_gpus else 1
    if min_len is None:
        return n, None
    n = max(1, min(n, min_len))
    return n, _even_sizes(min_len, n)


def _is_per_sample_list(obj: Any, sizes: list[int] | None) -> bool:
    """A list of atoms (strings, metadata) with one entry per sample, e.g. collated names."""
    return (
        type(obj) is list
        and sizes is not None
        and len(sizes) > 1
        and len(obj) == sum(sizes)
        and not any(isinstance(o, (torch.Tensor, DataContainer, list, tuple, dict)) for o in obj)
    )


def _split_list(obj: list, sizes: list[int]) -> list[list]:
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return [obj[s : s + n] for s, n in zip(starts, sizes)]


def _scatter_map(obj: Any, devices: list[torch.device], dim: int, sizes: list[int] | None) -> list:
    n = len(devices)
    if isinstance(obj, torch.Tensor):
        if n == 1 or obj.dim() == 0:
            return [_to_device(obj, d) for d in devices]
        if sizes is not None and obj.shape[dim] == sum(sizes):
            # Rows follow the DataContainer chunks, so sample i's fields meet on one device.
            pieces = torch.split(obj, sizes, dim)
        elif obj.shape[dim] < n:
            raise ValueError(
                f"scatter: a tensor of shape {tuple(obj.shape)} cannot be split into {n} "
                f"non-empty chunks along dim {dim}"
            )
        else:
            pieces = torch.tensor_split(obj, n, dim)
        return [_to_device(p, d) for p, d in zip(pieces, devices)]
    if isinstance(obj, DataContainer):
        if obj.cpu_only:
            return list(obj.data)
        return [_move(chunk, d) for chunk, d in zip(obj.data, devices)]
    if _is_per_sample_list(obj, sizes):
        return _split_list(obj, sizes)
    if isinstance(obj, tuple) and len(obj) > 0:
        return list(zip(*(_scatter_map(o, devices, dim, sizes) for o in obj)))
    if isinstance(obj, list) and len(obj) > 0:
        return [list(x) for x in zip(*(_scatter_map(o, devices, dim, sizes) for o in obj))]
    if isinstance(obj, dict) and len(obj) > 0:
        keys = list(obj)
        columns = zip(*(_scatter_map(obj[k], devices, dim, sizes) for k in keys))
        return [_rebuild_dict(obj, zip(keys, col)) for col in columns]
    return [obj for _ in devices]


class _NotOneChunk(Exception):
    """A DataContainer that is not exactly one collated chunk: take the general path."""


def _single_device(target_gpus: Sequence[Device] | None) -> torch.device | None:
    """The device when ``target_gpus`` names one (``[-1]``, ``[]`` and None: the CPU), else None."""
    if target_gpus is None or len(target_gpus) == 0:
        return _CPU
    if len(target_gpus) != 1:
        return None
    return _dev(target_gpus[0])


def _to_one_device(obj: Any, device: torch.device, merge: Merge | None = None) -> Any:
    """``obj`` as the only copy for ``device``: what the general path gives for one device.

    One walk and no copies where nothing moves: one-chunk DataContainers are unwrapped (the
    chunk moved unless ``cpu_only``), tensors already on ``device`` are passed as they are,
    containers are rebuilt around the results, anything else is passed as it is. A
    DataContainer of several chunks is first merged with ``merge`` when given. Raises
    ``_NotOneChunk`` where the general path has something to check or split (a DataContainer
    that is not one collated chunk).
    """
    if isinstance(obj, torch.Tensor):
        return _to_device(obj, device)
    if isinstance(obj, DataContainer):
        if not isinstance(obj.data, list):
            raise _NotOneChunk
        if len(obj.data) != 1 and merge is not None:
            obj = merge(obj)
        if len(obj.data) != 1:
            raise _NotOneChunk
        return obj.data[0] if obj.cpu_only else _move(obj.data[0], device)
    # Empty containers are repeated as they are, as the general path does.
    if isinstance(obj, dict):
        if not obj:
            return obj
        return _rebuild_dict(obj, [(k, _to_one_device(v, device, merge)) for k, v in obj.items()])
    if isinstance(obj, tuple):
        return tuple([_to_one_device(o, device, merge) for o in obj]) if obj else obj
    if isinstance(obj, list):
        return [_to_one_device(o, device, merge) for o in obj] if obj else obj
    return obj


def _one_device_pair(
    inputs: Any, kwargs: Any, target: Device | Sequence[Device] | None, merge: Merge | None = None
) -> tuple[tuple, dict] | None:
    """Positional and keyword inputs for one device in one walk, or None: take the general path.

    The case of every single-process step (``MMDataParallel`` on the CPU or one GPU, one
    process per GPU under DDP), run once per iteration, where planning chunks only costs time.
    ``target`` is one device, or a list of targets as :func:`scatter` takes them (None when it
    names several); ``merge`` merges the chunks of a DataContainer (see ``_to_one_device``).
    """
    one = isinstance(target, (list, tuple)) or target is None
    device = _single_device(target if one else [target])
    if device is None or not isinstance(inputs, tuple):
        return None
    if kwargs is not None and not isinstance(kwargs, dict):
        return None
    try:
        return _to_one_device(inputs, device, merge), (
            _to_one_device(kwargs, device, merge) if kwargs else {}
        )
    except _NotOneChunk:
        return None


def _devices(target_gpus: Sequence[Device] | None, n: int) -> list[torch.device]:
    if _is_cpu_target(target_gpus):
        return [torch.device("cpu")] * n
    return [_dev(g) for g in list(target_gpus)[:n]]


def scatter(inputs: ScatterInputs, target_gpus: Sequence[Device] | None, dim: int = 0) -> list:
    """Split ``inputs`` into one copy per device.

    DataContainer chunk ``i`` goes to ``target_gpus[i]`` (``cpu_only`` ones stay on the CPU as
    they are). Plain tensors are split along ``dim`` into as many pieces as there are chunks,
    with the chunks' sample counts when their length is the batch size; without
    DataContainers, into one piece per target device (never more pieces than rows). A list of
    atoms with one entry per sample (e.g. collated file names) is cut the same way. Other
    objects are repeated. For CPU targets every piece is kept, all on the CPU: with
    DataContainers one copy per chunk; without, one per listed device (``[-1, -1]``: two;
    ``[-1]``, ``[]`` or None: one). CUDA copies go through pinned memory with
    ``non_blocking=True``.

    Args:
        inputs: Nested tuples/lists/dicts of DataContainers, tensors and other objects.
        target_gpus: GPU ids (or devices), or ``[-1]``/``[]``/None for the CPU.
        dim: Dim along which plain tensors are split.

    Returns:
        A list with one scattered copy of ``inputs`` per device chunk.
    """
    device = _single_device(target_gpus)
    if device is not None:
        try:
            return [_to_one_device(inputs, device)]
        except _NotOneChunk:
            pass
    n, sizes = _plan([inputs], target_gpus, dim)
    return _scatter_map(inputs, _devices(target_gpus, n), dim, sizes)


def scatter_kwargs(
    inputs: ScatterInputs,
    kwargs: ScatterInputs | None,
    target_gpus: Sequence[Device] | None,
    dim: int = 0,
) -> tuple[tuple, tuple]:
    """Scatter positional and keyword inputs together.

    Args:
        inputs: Positional arguments (a tuple).
        kwargs: Keyword arguments (a dict) or None.
        target_gpus: As in :func:`scatter`.
        dim: As in :func:`scatter`.

    Returns:
        ``(inputs_per_device, kwargs_per_device)``, tuples of equal length; when one of them is
        empty it is padded with ``()`` / ``{}`` to the other's length.
    """
    one = _one_device_pair(inputs, kwargs, target_gpus)
    if one is not None:
        if not inputs and not kwargs:
            return (), ()
        return (one[0],), (one[1],)
    # One chunk count for both, so keyword args (e.g. the optimizer) reach every chunk.
    n, sizes = _plan([inputs, kwargs], target_gpus, dim)
    devices = _devices(target_gpus, n)
    scattered_in = _scatter_map(inputs, devices, dim, sizes) if inputs else []
    scattered_kw = _scatter_map(kwargs, devices, dim, sizes) if kwargs else []
    if len(scattered_in) < len(scattered_kw):
        scattered_in.extend(() for _ in range(len(scattered_kw) - len(scattered_in)))
    elif len(scattered_kw) < len(scattered_in):
        scattered_kw.extend({} for _ in range(len(scattered_in) - len(scattered_kw)))
    return tuple(tuple(x) for x in scattered_in), tuple(scattered_kw)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


def _weighted_mean(values: list, weights: list[float] | None, device: torch.device) -> Any:
    if weights is None:
        weights = [1.0] * len(values)
    total = float(sum(weights))
    if isinstance(values[0], torch.Tensor):
        moved = [v.to(device) for v in values]
        dtype = moved[0].dtype if moved[0].is_floating_point() else torch.get_default_dtype()
        return sum(v.to(dtype) * (w / total) for v, w in zip(moved, weights))
    return sum(float(v) * w for v, w in zip(values, weights)) / total


def _gather(values: list, weights: list[float] | None, key: Any, device: torch.device, dim: int):
    first = values[0]
    if key == "num_samples" and all(_is_number(v) or isinstance(v, torch.Tensor) for v in values):
        return sum(v.to(device) if isinstance(v, torch.Tensor) else v for v in values)
    if isinstance(first, torch.Tensor):
        if first.dim() == 0:
            return _weighted_mean(values, weights, device)
        return torch.cat([v.to(device) for v in values], dim=dim)
    if isinstance(first, dict):
        for i, v in enumerate(values):
            if not isinstance(v, dict) or set(v) != set(first):
                raise ValueError(
                    f"gather: output of device {i} has keys {sorted(map(str, v))} but device 0 "
                    f"has {sorted(map(str, first))} (at key {key!r})"
                )
        if "num_samples" in first and all(_is_number(v["num_samples"]) for v in values):
            weights = [float(v["num_samples"]) for v in values]
        return _rebuild_dict(
            first, ((k, _gather([v[k] for v in values], weights, k, device, dim)) for k in first)
        )
    if _is_number(first):
        return _weighted_mean(values, weights, device)
    if isinstance(first, tuple):
        items = [_gather(list(col), weights, key, device, dim) for col in zip(*values)]
        return type(first)(*items) if hasattr(first, "_fields") else tuple(items)
    if isinstance(first, list):
        return [item for v in values for item in _move(v, device)]
    if first is None and all(v is None for v in values):
        return None
    return list(values)


def gather(outputs: list, target_device: Device, dim: int = 0) -> Any:
    """Merge per-device outputs into one on ``target_device``.

    Rules, applied recursively (``outputs`` holds one output per device):

    - Tensors with dims are concatenated along ``dim``.
    - 0-dim tensors (losses) and numbers (``log_vars`` entries) are averaged, weighted by the
      enclosing dict's ``num_samples`` when present (else equally).
    - ``num_samples`` is summed.
    - Dicts are gathered key by key (keys must match); tuples position by position; lists are
      concatenated (they hold per-sample results); None stays None; anything else becomes a
      list with one entry per device.

    Args:
        outputs: One output per device.
        target_device: GPU id, ``-1``/``'cpu'`` for the CPU, or a torch.device.
        dim: Concatenation dim for tensors.

    Returns:
        The merged output. Gradients flow back through the tensor operations.
    """
    if not isinstance(outputs, (list, tuple)) or len(outputs) == 0:
        raise ValueError(
            f"gather: outputs must be a non-empty list (one per device), got {outputs!r}"
        )
    device = _dev(target_device)
    if len(outputs) == 1:
        return _move(outputs[0], device)
    return _gather(list(outputs), None, None, device, dim)
