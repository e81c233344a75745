"""Batch samples: DataContainer fields into per-device chunks, plain fields as torch does.

``collate`` is the ``collate_fn`` of mmpar data loaders. DataContainer fields are cut into
chunks of ``samples_per_gpu`` samples and padded/stacked per chunk; plain fields come out as
torch's ``default_collate`` makes them (as in mmcv). :func:`mmpar.parallel.scatter` then sends
chunk ``i`` of every DataContainer to device ``i`` and splits plain fields the same way.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch.utils.data import default_collate

from mmpar.utils.compat_errors import CheckTypeError

from .data_container import DataContainer

__all__ = ["collate", "merge_chunks", "pad_and_stack"]

_ATOMS = (str, bytes)


class _StackError(ValueError, AssertionError, RuntimeError):
    """Tensors that cannot be stacked.

    A ``ValueError`` (mmpar), an ``AssertionError`` (what mmcv's DataContainer checks raise) and
    a ``RuntimeError`` (what ``torch.stack`` raises for plain fields).
    """


def _as_tensor(value: Any, path: str) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "SaUO":
            raise CheckTypeError(
                f"collate: {path} is a numpy array of dtype {value.dtype}; cannot stack it"
            )
        return torch.from_numpy(value)
    raise CheckTypeError(
        f"collate: {path} must be a tensor or numpy array to be stacked, but got "
        f"{type(value).__name__}; wrap it as DataContainer(..., stack=False) to keep a list"
    )


def _stack_plan(
    tensors: Sequence[torch.Tensor],
    pad_dims: int | None,
    path: str,
    first_index: int,
    scope: str = "the same chunk",
) -> tuple[list[int], torch.dtype]:
    """Check that ``tensors`` can be padded and stacked; return the max shape and the dtype."""
    ref = tensors[0]
    ndim = ref.dim()
    if pad_dims is not None and ndim < pad_dims:
        raise _StackError(
            f"collate: {path} (sample {first_index}) has shape {tuple(ref.shape)} with {ndim} "
            f"dims, fewer than pad_dims={pad_dims}; lower pad_dims or reshape the field"
        )
    fixed = ndim if pad_dims is None else ndim - pad_dims
    max_shape = list(ref.shape)
    dtype = ref.dtype
    for offset, t in enumerate(tensors[1:], start=1):
        if t.dim() != ndim or t.shape[:fixed] != ref.shape[:fixed]:
            rule = (
                "all shapes must match (pad_dims=None)"
                if pad_dims is None
                else f"only the last {pad_dims} dims may differ (pad_dims={pad_dims})"
            )
            raise _StackError(
                f"collate: {path} of sample {first_index + offset} has shape {tuple(t.shape)} "
                f"but sample {first_index} of {scope} has shape {tuple(ref.shape)}; "
                f"{rule}. Make the samples agree or change pad_dims of the DataContainer."
            )
        for d in range(fixed, ndim):
            max_shape[d] = max(max_shape[d], t.shape[d])
        if t.dtype != dtype:
            dtype = torch.promote_types(dtype, t.dtype)
    return max_shape, dtype


def pad_and_stack(
    tensors: Sequence[torch.Tensor],
    pad_dims: int | None,
    padding_value: float = 0,
    path: str = "tensors",
    first_index: int = 0,
) -> torch.Tensor:
    """Pad the last ``pad_dims`` dims of each tensor to their maximum and stack them.

    The output is allocated once and each tensor is copied into its slice (right/bottom
    padding), so every byte is written once.

    Args:
        tensors: Non-empty sequence of tensors of equal rank.
        pad_dims: Number of trailing dims that may differ, or None (all shapes must match).
        padding_value: Fill value of the padding.
        path: Field path used in error messages.
        first_index: Batch index of ``tensors[0]`` (error messages count from it).

    Returns:
        Tensor of shape ``(len(tensors), *max_shape)`` with the promoted dtype of the inputs.

    Raises:
        ValueError: Ranks differ, a tensor has fewer than ``pad_dims`` dims, or a dim that may
            not be padded differs (also an ``AssertionError`` and a ``RuntimeError``).
    """
    max_shape, dtype = _stack_plan(tensors, pad_dims, path, first_index)
    out = tensors[0].new_full((len(tensors), *max_shape), padding_value, dtype=dtype)
    for i, t in enumerate(tensors):
        out[i][tuple(slice(0, s) for s in t.shape)].copy_(t)
    return out


def _chunks(samples: list, samples_per_gpu: int) -> list[tuple[int, list]]:
    return [
        (start, samples[start : start + samples_per_gpu])
        for start in range(0, len(samples), samples_per_gpu)
    ]


def _check_same_kind(samples: list, path: str, kind: Any, kind_name: str) -> None:
    for i, s in enumerate(samples):
        if not isinstance(s, kind):
            raise TypeError(
                f"collate: {path} is a {kind_name} in sample 0 but a {type(s).__name__} in "
                f"sample {i}; every sample must have the same structure"
            )


def _collate_dc(samples: list, spg: int, path: str) -> DataContainer:
    _check_same_kind(samples, path, DataContainer, "DataContainer")
    first = samples[0]
    flags = (first.stack, first.cpu_only, first.pad_dims, first.padding_value)
    for i, s in enumerate(samples):
        if (s.stack, s.cpu_only, s.pad_dims, s.padding_value) != flags:
            raise ValueError(
                f"collate: {path} has DataContainer flags (stack, cpu_only, pad_dims, "
                f"padding_value)={flags} in sample 0 but "
                f"{(s.stack, s.cpu_only, s.pad_dims, s.padding_value)} in sample {i}"
            )
    chunks: list = []
    for start, chunk in _chunks(samples, spg):
        if first.stack and not first.cpu_only:
            tensors = [
                _as_tensor(s.data, f"{path} (sample {start + k})") for k, s in enumerate(chunk)
            ]
            chunks.append(pad_and_stack(tensors, first.pad_dims, first.padding_value, path, start))
        else:
            chunks.append([s.data for s in chunk])
    return DataContainer(
        chunks,
        stack=first.stack,
        padding_value=first.padding_value,
        cpu_only=first.cpu_only,
        pad_dims=first.pad_dims,
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, _ATOMS)


def _stack_plain(samples: list, path: str) -> torch.Tensor:
    """Stack a plain tensor/array field as ``default_collate`` does, with errors naming it."""
    _check_same_kind(samples, path, (torch.Tensor, np.ndarray), "tensor")
    tensors = [_as_tensor(s, f"{path} (sample {i})") for i, s in enumerate(samples)]
    _, dtype = _stack_plan(tensors, None, path, 0, scope="the batch")
    tensors = [t if t.dtype == dtype else t.to(dtype) for t in tensors]
    # default_collate itself stacks, so the result is exactly torch's (in a loader worker it
    # also allocates the batch in shared memory, saving a copy on the way to the main process).
    return default_collate(tensors)


def _collate_numbers(samples: list, path: str) -> torch.Tensor:
    for i, s in enumerate(samples):
        if not _is_number(s):
            raise TypeError(
                f"collate: {path} is a number in sample 0 but a {type(s).__name__} in "
                f"sample {i}; every sample must have the same structure"
            )
    try:
        return default_collate(samples)  # float -> float64, int -> int64, numpy scalars kept
    except TypeError as err:
        raise TypeError(
            f"collate: {path} holds {type(samples[0]).__name__} numbers, which torch's "
            f"default_collate cannot batch ({err})"
        ) from err


def _collate(samples: list, spg: int, path: str) -> Any:
    first = samples[0]
    if isinstance(first, DataContainer):
        return _collate_dc(samples, spg, path)
    if isinstance(first, (torch.Tensor, np.ndarray)):
        return _stack_plain(samples, path)
    if isinstance(first, _ATOMS) or first is None:
        # Strings are atoms, not sequences of characters: a list, as default_collate makes.
        return list(samples)
    if _is_number(first):
        return _collate_numbers(samples, path)
    if isinstance(first, Mapping):
        _check_same_kind(samples, path, Mapping, "mapping")
        out = {}
        for key in first:
            for i, s in enumerate(samples):
                if key not in s:
                    raise KeyError(
                        f"collate: sample {i} lacks key {key!r} that sample 0 has at {path}; "
                        f"every sample must have the same keys"
                    )
            out[key] = _collate([s[key] for s in samples], spg, f"{path}[{key!r}]")
        return out
    if isinstance(first, Sequence):
        _check_same_kind(samples, path, Sequence, "sequence")
        for i, s in enumerate(samples):
            if isinstance(s, _ATOMS) or len(s) != len(first):
                raise _StackError(
                    f"collate: {path} has length {len(first)} in sample 0 but "
                    f"{len(s) if not isinstance(s, _ATOMS) else type(s).__name__} in sample {i}; "
                    f"use DataContainer(..., stack=False) for variable-length fields"
                )
        return [_collate([s[j] for s in samples], spg, f"{path}[{j}]") for j in range(len(first))]
    # Any other object (a custom class; default_collate would raise): a list, like strings.
    return list(samples)


def collate(batch: Sequence, samples_per_gpu: int = 1) -> Any:
    """Collate a list of samples (``collate_fn`` of mmpar loaders), as mmcv 1.x does.

    DataContainer fields are cut into chunks of ``samples_per_gpu`` samples (the last may be
    smaller); chunk ``i`` is meant for device ``i``. Plain fields are batched whole, as torch's
    ``default_collate`` batches them; :func:`mmpar.parallel.scatter` splits them per device.
    Per field:

    - ``DataContainer(cpu_only=True)``: ``DataContainer([[data, ...] per chunk], cpu_only=True)``.
    - ``DataContainer(stack=True)``: ``DataContainer([Tensor(n_i, *max_shape) per chunk])``;
      the last ``pad_dims`` dims are padded (right/bottom) with ``padding_value``.
    - ``DataContainer(stack=False)``: ``DataContainer([[data, ...] per chunk])``.
    - Plain tensors and numpy arrays: one stacked ``Tensor(batch, ...)`` (shapes must match;
      mixed dtypes are promoted); numbers: a tensor (Python floats become float64, ints int64).
    - Strings and bytes (atoms, never split into characters), None and other objects: a list.
    - Mappings: a dict of collated values; sequences: a list of collated positions.

    Args:
        batch: Non-empty sequence of samples (all with the same structure).
        samples_per_gpu: Number of samples per device chunk.

    Returns:
        The collated structure described above.

    Raises:
        TypeError: ``batch`` is not a sequence, or samples differ in structure.
        ValueError: ``batch`` is empty, ``samples_per_gpu`` < 1, or shapes cannot be stacked
            (that error is also an ``AssertionError`` and a ``RuntimeError``, what mmcv's
            assertions and ``torch.stack`` raise).
    """
    if isinstance(batch, (_ATOMS, Mapping)) or not isinstance(batch, Sequence):
        raise TypeError(
            f"collate: batch must be a list of samples, but got {type(batch).__name__}; "
            f"pass the list the DataLoader built (collate_fn receives it)"
        )
    if isinstance(samples_per_gpu, bool) or not isinstance(samples_per_gpu, int):
        raise TypeError(f"collate: samples_per_gpu must be an int, got {samples_per_gpu!r}")
    if samples_per_gpu < 1:
        raise ValueError(f"collate: samples_per_gpu must be >= 1, got {samples_per_gpu}")
    if len(batch) == 0:
        raise ValueError("collate: batch is empty; a DataLoader batch holds at least one sample")
    return _collate(list(batch), samples_per_gpu, "batch")


def _merge_dc(dc: DataContainer) -> DataContainer:
    chunks = dc.data
    if not isinstance(chunks, list):
        raise TypeError(
            f"{dc!r} holds a {type(chunks).__name__}, not a list of per-device chunks; "
            f"batch samples with mmpar.parallel.collate first"
        )
    if len(chunks) <= 1:
        return dc
    if dc.stack and not dc.cpu_only:
        merged = _merge_stacked(chunks, dc.pad_dims, dc.padding_value)
    else:
        merged = [item for chunk in chunks for item in chunk]
    return DataContainer(
        [merged], dc.stack, dc.padding_value, cpu_only=dc.cpu_only, pad_dims=dc.pad_dims
    )


def _merge_stacked(chunks: list, pad_dims: int | None, padding_value: float) -> torch.Tensor:
    ref = chunks[0]
    # Chunks are (n_i, *sample_shape); only the last pad_dims sample dims may differ.
    end_fixed = ref.dim() if pad_dims is None else ref.dim() - pad_dims
    max_shape = list(ref.shape[1:])
    dtype = ref.dtype
    for c in chunks[1:]:
        if c.dim() != ref.dim() or c.shape[1:end_fixed] != ref.shape[1:end_fixed]:
            raise ValueError(
                f"merge_chunks: chunk shapes {tuple(ref.shape)} and {tuple(c.shape)} cannot be "
                f"concatenated (pad_dims={pad_dims})"
            )
        max_shape = [max(a, b) for a, b in zip(max_shape, c.shape[1:])]
        dtype = torch.promote_types(dtype, c.dtype)
    total = sum(c.shape[0] for c in chunks)
    out = ref.new_full((total, *max_shape), padding_value, dtype=dtype)
    start = 0
    for c in chunks:
        out[(slice(start, start + c.shape[0]), *(slice(0, s) for s in c.shape[1:]))].copy_(c)
        start += c.shape[0]
    return out


def merge_chunks(obj: Any) -> Any:
    """Merge every DataContainer's per-device chunks into a single chunk.

    Stacked tensors are re-padded to the overall maximum and concatenated; lists are
    concatenated. The result equals ``collate(batch, samples_per_gpu=len(batch))``. Used when
    the whole batch runs on one device (CPU or a single GPU).

    Args:
        obj: Output of :func:`collate` (or any nested tuple/list/dict containing it).

    Returns:
        The same structure, each DataContainer holding exactly one chunk.
    """
    if isinstance(obj, DataContainer):
        return _merge_dc(obj)
    if isinstance(obj, tuple):
        return tuple(map(merge_chunks, obj))
    if isinstance(obj, list):
        return list(map(merge_chunks, obj))
    if isinstance(obj, dict):
        return type(obj)((k, merge_chunks(v)) for k, v in obj.items()) if obj else obj
    return obj
