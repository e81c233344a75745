"""The rulebook and gather-GEMM-scatter kernels of mmcv's sparse convolution, in PyTorch.

A *rulebook* (mmcv: ``indice_pairs``) says, per kernel offset ``k``, which input site feeds which
output site: ``indice_pairs[k, 0, :n_k]`` are input rows, ``indice_pairs[k, 1, :n_k]`` output
rows (the rest ``-1``), ``indice_pair_num[k] = n_k``, all int32, offsets in row-major kernel
order. It is built with tensor ops: every (site, offset) candidate at once, output sites found by
``torch.unique`` of their linearized coordinates (submanifold: by ``torch.searchsorted`` into the
input sites). Output sites come in sorted (batch, z, y, x) order, as on mmcv's CUDA kernel.
A convolution then gathers the input rows, multiplies them by the offset's weight and
scatter-adds them into the output rows, one matrix product per kernel offset.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union

import torch
from torch import Tensor

__all__ = [
    "fused_indice_conv",
    "get_conv_output_size",
    "get_deconv_output_size",
    "get_indice_pairs",
    "indice_conv",
    "indice_conv_backward",
    "indice_maxpool",
    "indice_maxpool_backward",
]

IntOrSeq = Union[int, Sequence[int]]  # noqa: UP007 (a runtime alias)


def _per_dim(value: IntOrSeq, ndim: int) -> list[int]:
    return list(value) if isinstance(value, (list, tuple)) else [value] * ndim


def get_conv_output_size(
    input_size: Sequence[int],
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
) -> list[int]:
    """The spatial size after a convolution (a kernel size of -1 gives 1), as mmcv."""
    return [
        1 if k == -1 else (n + 2 * p - d * (k - 1) - 1) // s + 1
        for n, k, s, p, d in zip(input_size, kernel_size, stride, padding, dilation)
    ]


def get_deconv_output_size(
    input_size: Sequence[int],
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    output_padding: Sequence[int],
) -> list[int]:
    """The spatial size after a transposed convolution, as mmcv (dilation is not used)."""
    if any(k == -1 for k in kernel_size):
        raise ValueError("deconv don't support kernel_size < 0")
    return [
        (n - 1) * s - 2 * p + k + op
        for n, k, s, p, op in zip(input_size, kernel_size, stride, padding, output_padding)
    ]


def _check_indices(indices: Tensor, batch_size: int, spatial_shape: Sequence[int]) -> None:
    if indices.dim() != 2 or indices.is_floating_point():
        raise ValueError(
            f"sparse conv: indices must be an integer (N, ndim + 1) tensor, got "
            f"{indices.dtype} {tuple(indices.shape)}"
        )
    if indices.size(1) != len(spatial_shape) + 1:
        raise ValueError(
            f"sparse conv: indices have {indices.size(1) - 1} spatial columns but the spatial "
            f"shape {list(spatial_shape)} has {len(spatial_shape)}"
        )
    if indices.size(0) == 0:
        return
    bounds = torch.tensor([batch_size, *spatial_shape], device=indices.device)
    if bool(((indices < 0) | (indices >= bounds)).any()):
        raise ValueError(
            f"sparse conv: an index is outside batch_size {batch_size} x spatial shape "
            f"{list(spatial_shape)} (indices range {indices.amin(0).tolist()} to "
            f"{indices.amax(0).tolist()}); fix the SparseConvTensor's indices or shape"
        )


def _row_major_strides(shape: Sequence[int], device: torch.device) -> Tensor:
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * int(shape[i + 1])
    return torch.tensor(strides, dtype=torch.long, device=device)


def _kernel_taps(kernel_size: Sequence[int], device: torch.device) -> Tensor:
    """(K, ndim) tap positions of the kernel, in row-major order (mmcv's offset numbering)."""
    axes = [torch.arange(int(k), device=device) for k in kernel_size]
    return torch.stack(torch.meshgrid(*axes, indexing="ij"), dim=-1).reshape(-1, len(axes))


def _candidate_keys(
    idx: Tensor,
    taps: Tensor,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    out_shape: Sequence[int],
    transpose: bool,
) -> tuple[Tensor, Tensor]:
    """Linearized output site of every (offset, input site) pair, (K, N), and its validity.

    One pass per spatial dimension over (K, N) tensors: the dimensions are few and fixed.
    """
    volume = 1
    for n in out_shape:
        volume *= int(n)
    keys = (idx[:, 0] * volume).unsqueeze(0).expand(taps.size(0), -1)
    valid = torch.ones(keys.shape, dtype=torch.bool, device=idx.device)
    step = volume
    for dim, (s, p, d, n) in enumerate(zip(stride, padding, dilation, out_shape)):
        step //= int(n)
        pos, tap = idx[:, dim + 1].unsqueeze(0), taps[:, dim].unsqueeze(1)
        if transpose:
            out = pos * s - p + tap * d
        else:
            out = pos + p - tap * d
            if s != 1:
                valid &= out.remainder(s) == 0
                out = torch.div(out, s, rounding_mode="floor")
        valid &= (out >= 0) & (out < n)
        keys = keys + out * step
    return keys, valid


# Largest grid (batch x volume) looked up through a dense table (int32: 256 MB at most).
_MAX_TABLE = 1 << 26


def _lookup(site_keys: Tensor, queries: Tensor, grid_volume: int) -> Tensor:
    """Row of each query key among ``site_keys``, or -1; the last of repeated sites wins."""
    if grid_volume <= _MAX_TABLE:
        # A dense table over the grid, as mmcv's kernel: one scatter, one gather.
        # int32 (mmcv's grid type): half the memory traffic of int64 on a mostly empty table.
        table = torch.full((grid_volume,), -1, dtype=torch.int32, device=site_keys.device)
        table[site_keys] = torch.arange(
            site_keys.numel(), dtype=torch.int32, device=site_keys.device
        )
        return table[queries].long()
    sorted_keys, order = torch.sort(site_keys, stable=True)
    if not sorted_keys.numel():
        return torch.full_like(queries, -1)
    at = (torch.searchsorted(sorted_keys, queries, right=True) - 1).clamp(min=0)
    return torch.where(sorted_keys[at] == queries, order[at], -1)


def get_indice_pairs(
    indices: Tensor,
    batch_size: int,
    spatial_shape: Sequence[int],
    ksize: IntOrSeq = 3,
    stride: IntOrSeq = 1,
    padding: IntOrSeq = 0,
    dilation: IntOrSeq = 1,
    out_padding: IntOrSeq = 0,
    subm: bool = False,
    transpose: bool = False,
    grid: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Build the rulebook of a sparse convolution, as mmcv's ``get_indice_pairs``.

    Args:
        indices: (N, ndim + 1) integer (batch, *spatial) indices of the active input sites.
        batch_size: The number of samples.
        spatial_shape: The input's spatial size.
        ksize: Kernel size, one int or one per dimension; likewise the next four.
        stride: Stride (submanifold: ignored, 1).
        padding: Padding (submanifold: ignored, ``ksize // 2``).
        dilation: Dilation; with a stride other than 1 it must be 1.
        out_padding: Output padding of a transposed convolution.
        subm: Submanifold: the output sites are the input sites.
        transpose: Transposed convolution.
        grid: Accepted for mmcv's signature; not needed.

    Returns:
        ``(out_indices, indice_pairs, indice_pair_num)``: (M, ndim + 1) int32 output sites
        (submanifold: ``indices`` itself), the (K, 2, N) int32 rulebook and (K,) int32 counts.

    Raises:
        ValueError: When an index lies outside ``batch_size`` x ``spatial_shape``, or the
            indices do not match the spatial shape's dimensions.
    """
    ndim = indices.shape[1] - 1
    ksize, stride, padding, dilation, out_padding = (
        _per_dim(v, ndim) for v in (ksize, stride, padding, dilation, out_padding)
    )
    for d, s in zip(dilation, stride):
        assert s == 1 or d == 1, "don't support this."
    _check_indices(indices, batch_size, spatial_shape)
    if subm:
        stride, padding, out_shape = [1] * ndim, [k // 2 for k in ksize], list(spatial_shape)
    elif transpose:
        out_shape = get_deconv_output_size(
            spatial_shape, ksize, stride, padding, dilation, out_padding
        )
    else:
        out_shape = get_conv_output_size(spatial_shape, ksize, stride, padding, dilation)
    device = indices.device
    num_in = indices.size(0)
    taps = _kernel_taps(ksize, device)
    idx = indices.long()
    cand_keys, valid = _candidate_keys(
        idx, taps, stride, padding, dilation, out_shape, transpose and not subm
    )
    lin = _row_major_strides(out_shape, device)
    volume = int(torch.tensor(out_shape).prod())
    # Candidates listed offset by offset, input sites in order within each offset.
    chosen = valid.reshape(-1).nonzero().squeeze(1)
    k_idx = torch.div(chosen, max(num_in, 1), rounding_mode="floor")
    j_idx = chosen - k_idx * num_in
    keys = cand_keys.reshape(-1)[chosen]
    if subm:
        in_keys = idx[:, 0] * volume + (idx[:, 1:] * lin).sum(-1)
        found = _lookup(in_keys, keys, batch_size * volume)
        hit = found >= 0
        k_idx, j_idx, out_rows = k_idx[hit], j_idx[hit], found[hit]
        out_indices = indices
    else:
        unique_keys, out_rows = torch.unique(keys, return_inverse=True)
        coords = [torch.div(unique_keys, volume, rounding_mode="floor")]
        rest = unique_keys.remainder(volume)
        for step in lin.tolist():
            coords.append(torch.div(rest, step, rounding_mode="floor"))
            rest = rest.remainder(step)
        out_indices = torch.stack(coords, dim=1).to(torch.int32)
    num_taps = taps.size(0)
    counts = torch.bincount(k_idx, minlength=num_taps)
    slot = torch.arange(k_idx.numel(), device=device) - (torch.cumsum(counts, 0) - counts)[k_idx]
    pairs = torch.full((num_taps, 2, num_in), -1, dtype=torch.int32, device=device)
    pairs[k_idx, 0, slot] = j_idx.to(torch.int32)
    pairs[k_idx, 1, slot] = out_rows.to(torch.int32)
    return out_indices, pairs, counts.to(torch.int32)


def _flat_pairs(
    indice_pairs: Tensor, indice_pair_num: Tensor, inverse: bool, skip: int | None
) -> tuple[Tensor, Tensor, list[int]]:
    """All (source row, target row) pairs, offset by offset, and the count per offset."""
    counts = indice_pair_num.to(torch.long)
    if skip is not None:
        counts = counts.clone()
        counts[skip] = 0
    width = indice_pairs.size(2)
    mask = torch.arange(width, device=indice_pairs.device) < counts.to(indice_pairs.device)[:, None]
    src, dst = (1, 0) if inverse else (0, 1)
    source = indice_pairs[:, src][mask].long()
    target = indice_pairs[:, dst][mask].long()
    return source, target, counts.tolist()


def _subm_center(indice_pair_num: Tensor, subm: bool) -> int | None:
    # mmcv's kernel applies the busiest offset (the centre for submanifold) to every row at once.
    return int(torch.argmax(indice_pair_num)) if subm and indice_pair_num.numel() else None


def _check_conv(features: Tensor, filters: Tensor, indice_pairs: Tensor) -> Tensor:
    kernel_volume = indice_pairs.size(0)
    if features.dim() != 2 or features.size(1) != filters.size(-2):
        raise ValueError(
            f"sparse conv: features must be (N, {filters.size(-2)}) for filters of shape "
            f"{tuple(filters.shape)}, got {tuple(features.shape)}"
        )
    if filters[..., 0, 0].numel() != kernel_volume:
        raise ValueError(
            f"sparse conv: filters {tuple(filters.shape)} have {filters[..., 0, 0].numel()} "
            f"kernel offsets but the rulebook has {kernel_volume}"
        )
    return filters.reshape(kernel_volume, filters.size(-2), filters.size(-1))


def indice_conv(
    features: Tensor,
    filters: Tensor,
    indice_pairs: Tensor,
    indice_pair_num: Tensor,
    num_activate_out: int,
    inverse: bool = False,
    subm: bool = False,
) -> Tensor:
    """Sparse convolution by gather-GEMM-scatter (no bias), as mmcv's ``indice_conv``.

    Args:
        features: (N, C_in) input features.
        filters: (*kernel_size, C_in, C_out) weight, mmcv's layout.
        indice_pairs: The (K, 2, L) rulebook of :func:`get_indice_pairs`.
        indice_pair_num: (K,) pairs per offset.
        num_activate_out: The number of output sites.
        inverse: Run the rulebook backwards (output rows are sources), for inverse convolution.
        subm: Submanifold: the busiest offset maps every site to itself.

    Returns:
        (num_activate_out, C_out) output features.
    """
    weight = _check_conv(features, filters, indice_pairs)
    center = _subm_center(indice_pair_num, subm)
    source, target, counts = _flat_pairs(indice_pairs, indice_pair_num, inverse, center)
    if center is not None:
        out = features @ weight[center]
    else:
        out = features.new_zeros((int(num_activate_out), weight.size(2)))
    gathered = features.index_select(0, source)
    # One matrix product per kernel offset over its contiguous block of pairs; plain ops, so
    # the fused path (called outside the autograd functions) stays differentiable too.
    blocks = gathered.split(counts)
    products = [block @ weight[k] for k, block in enumerate(blocks) if counts[k]]
    if not products:
        return out
    return out.index_add(0, target, torch.cat(products))


def indice_conv_backward(
    features: Tensor,
    filters: Tensor,
    out_bp: Tensor,
    indice_pairs: Tensor,
    indice_pair_num: Tensor,
    inverse: bool = False,
    subm: bool = False,
) -> tuple[Tensor, Tensor]:
    """Gradients of :func:`indice_conv` for its features and filters, as mmcv's kernel.

    Returns:
        ``(input_bp, filters_bp)``, shaped as ``features`` and ``filters``.
    """
    weight = _check_conv(features, filters, indice_pairs)
    center = _subm_center(indice_pair_num, subm)
    source, target, counts = _flat_pairs(indice_pairs, indice_pair_num, inverse, center)
    weight_bp = torch.zeros_like(weight)
    if center is not None:
        input_bp = out_bp @ weight[center].t()
        weight_bp[center] = features.t() @ out_bp
    else:
        input_bp = torch.zeros_like(features)
    gathered = features.index_select(0, source)
    grads = out_bp.index_select(0, target)
    partial = []
    for k, (inputs, grad) in enumerate(zip(gathered.split(counts), grads.split(counts))):
        if counts[k]:
            partial.append(grad @ weight[k].t())
            weight_bp[k] += inputs.t() @ grad
    if partial:
        input_bp.index_add_(0, source, torch.cat(partial))
    return input_bp, weight_bp.reshape(filters.shape)


def fused_indice_conv(
    features: Tensor,
    filters: Tensor,
    bias: Tensor,
    indice_pairs: Tensor,
    indice_pair_num: Tensor,
    num_activate_out: int,
    inverse: bool,
    subm: bool,
) -> Tensor:
    """:func:`indice_conv` plus ``bias`` (mmcv's fused-BN path)."""
    out = indice_conv(
        features, filters, indice_pairs, indice_pair_num, num_activate_out, inverse, subm
    )
    return out + bias


def indice_maxpool(
    features: Tensor, indice_pairs: Tensor, indice_pair_num: Tensor, num_activate_out: int
) -> Tensor:
    """Sparse max pooling, as mmcv's kernel: each output starts at 0, so it is never negative.

    Returns:
        (num_activate_out, C) pooled features.
    """
    source, target, _ = _flat_pairs(indice_pairs, indice_pair_num, False, None)
    out = features.new_zeros((int(num_activate_out), features.size(1)))
    index = target.unsqueeze(1).expand(-1, features.size(1))
    return out.scatter_reduce_(0, index, features.index_select(0, source), "amax")


def indice_maxpool_backward(
    features: Tensor,
    out_features: Tensor,
    out_bp: Tensor,
    indice_pairs: Tensor,
    indice_pair_num: Tensor,
) -> Tensor:
    """Gradient of :func:`indice_maxpool`: every input equal to its output's maximum gets it."""
    source, target, _ = _flat_pairs(indice_pairs, indice_pair_num, False, None)
    hits = features.index_select(0, source) == out_features.index_select(0, target)
    grads = out_bp.index_select(0, target) * hits
    return torch.zeros_like(features).index_add_(0, source, grads)
