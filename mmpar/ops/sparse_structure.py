"""The sparse tensor of mmcv's sparse convolution (mmcv.ops.sparse_structure)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

__all__ = ["SparseConvTensor", "scatter_nd"]


def scatter_nd(indices: Tensor, updates: Tensor, shape: Sequence[int]) -> Tensor:
    """Write ``updates`` into a zero tensor of ``shape`` at ``indices`` (TensorFlow's scatter_nd).

    Args:
        indices: (..., ndim) integer indices into the first ``ndim`` dimensions of ``shape``.
        updates: The values, of shape ``indices.shape[:-1] + shape[ndim:]``.
        shape: The output shape.

    Returns:
        The new tensor, in ``updates``'s dtype and device. A repeated index keeps one of its
        updates (no accumulation), as in mmcv.

    Raises:
        IndexError: When an index is outside ``shape``.
    """
    shape = [int(s) for s in shape]
    out = torch.zeros(*shape, dtype=updates.dtype, device=updates.device)
    ndim = indices.shape[-1]
    flat = indices.reshape(-1, ndim).long()
    if flat.numel():
        low = flat.amin(0)
        high = flat.amax(0)
        bounds = torch.tensor(shape[:ndim], device=flat.device)
        if bool((low < 0).any() | (high >= bounds).any()):
            raise IndexError(
                f"scatter_nd: indices must lie in [0, {shape[:ndim]}), got a range of "
                f"{low.tolist()} to {high.tolist()}"
            )
    out[tuple(flat.unbind(1))] = updates.reshape(flat.size(0), *shape[ndim:])
    return out


class SparseConvTensor:
    """Active sites of a sparse feature map: their features and (batch, *spatial) indices.

    Args:
        features: (N, C) features of the active sites.
        indices: (N, ndim + 1) int32 indices, the batch index first.
        spatial_shape: The spatial size of the map, ndim numbers.
        batch_size: The number of samples.
        grid: Accepted for mmcv's signature (a pre-allocated rulebook buffer of mmcv's CUDA
            kernel); this implementation does not need it.
    """

    def __init__(
        self,
        features: Tensor,
        indices: Tensor,
        spatial_shape: Sequence[int],
        batch_size: int,
        grid: Tensor | None = None,
    ) -> None:
        self.features = features
        self.indices = indices
        self.spatial_shape = spatial_shape
        self.batch_size = batch_size
        # indice_key -> (out indices, in indices, indice pairs, pair counts, in spatial shape)
        self.indice_dict: dict[Any, tuple] = {}
        self.grid = grid

    @property
    def spatial_size(self) -> int:
        """The number of sites of one sample's map."""
        return np.prod(self.spatial_shape)

    def find_indice_pair(self, key: Any) -> tuple | None:
        """Return the rulebook stored under ``key`` by an earlier layer, or None."""
        if key is None:
            return None
        return self.indice_dict.get(key)

    def dense(self, channels_first: bool = True) -> Tensor:
        """Return the dense map: (B, C, *spatial), or (B, *spatial, C) if not channels_first."""
        shape = [self.batch_size, *self.spatial_shape, self.features.shape[1]]
        res = scatter_nd(self.indices.long(), self.features, shape)
        if not channels_first:
            return res
        ndim = len(self.spatial_shape)
        return res.permute(0, ndim + 1, *range(1, ndim + 1)).contiguous()

    @property
    def sparity(self) -> float:
        """The fraction of active sites (mmcv's spelling)."""
        return self.indices.shape[0] / np.prod(self.spatial_shape) / self.batch_size
