"""Dynamic scatter (mmcv.ops.scatter_points): reduce point features into their voxels.

Follows mmcv-full's CUDA kernel (mmcv has no CPU kernel for it): points whose coordinates hold a
negative number are dropped; the voxels come out in sorted (lexicographic) coordinate order; the
reduction is ``max``, ``sum`` or ``mean``. In backward, ``max`` sends each voxel channel's gradient
to the lowest-index point holding the maximum, ``sum`` copies it, ``mean`` divides by the count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor, nn
from torch.autograd import Function

__all__ = ["DynamicScatter", "dynamic_scatter"]

_REDUCTIONS = ("max", "sum", "mean")


def _check(feats: Tensor, coors: Tensor, reduce_type: str) -> None:
    if reduce_type not in _REDUCTIONS:
        raise ValueError(
            f"dynamic_scatter: reduce_type must be one of {_REDUCTIONS}, got {reduce_type!r}"
        )
    if not isinstance(feats, Tensor) or not isinstance(coors, Tensor):
        raise TypeError("dynamic_scatter: feats and coors must be torch.Tensor")
    if feats.dim() != 2 or coors.dim() != 2 or feats.size(0) != coors.size(0):
        raise ValueError(
            f"dynamic_scatter: feats must be (N, C) and coors (N, ndim) with the same N, got "
            f"{tuple(feats.shape)} and {tuple(coors.shape)}"
        )
    if not feats.is_floating_point() or coors.is_floating_point():
        raise TypeError(
            f"dynamic_scatter: feats must be floating point and coors integer, got "
            f"{feats.dtype} and {coors.dtype}"
        )


def _group(coors: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Return (voxel coordinates, voxel index per point or -1, points per voxel)."""
    invalid = (coors < 0).any(dim=1)
    clean = coors.masked_fill(invalid.unsqueeze(1), -1)
    voxel_coors, point2voxel, counts = torch.unique(
        clean, dim=0, return_inverse=True, return_counts=True
    )
    if voxel_coors.size(0) and bool(voxel_coors[0, 0] < 0):
        # The all -1 row sorts first: it holds the dropped points.
        voxel_coors, counts, point2voxel = voxel_coors[1:], counts[1:], point2voxel - 1
    return voxel_coors, point2voxel, counts


class _DynamicScatter(Function):
    @staticmethod
    def forward(ctx: Any, feats: Tensor, coors: Tensor, reduce_type: str = "max") -> tuple:
        _check(feats, coors, reduce_type)
        if feats.size(0) == 0:
            ctx.mark_non_differentiable(coors)
            ctx.reduce_type = reduce_type
            ctx.save_for_backward(feats, feats, coors.new_empty(0), coors.new_empty(0))
            return feats.clone(), coors.clone()
        voxel_coors, point2voxel, counts = _group(coors)
        kept = point2voxel >= 0
        target = point2voxel[kept].unsqueeze(1).expand(-1, feats.size(1))
        if reduce_type == "max":
            out = feats.new_full((voxel_coors.size(0), feats.size(1)), float("-inf"))
            out.scatter_reduce_(0, target, feats[kept], "amax")
        else:
            out = feats.new_zeros((voxel_coors.size(0), feats.size(1)))
            out.scatter_add_(0, target, feats[kept])
            if reduce_type == "mean":
                out /= counts.unsqueeze(1).to(out.dtype)
        ctx.reduce_type = reduce_type
        ctx.save_for_backward(feats, out, point2voxel, counts)
        ctx.mark_non_differentiable(voxel_coors)
        return out, voxel_coors

    @staticmethod
    def backward(ctx: Any, grad_out: Tensor, grad_coors: Tensor | None = None) -> tuple:
        feats, out, point2voxel, counts = ctx.saved_tensors
        grad_feats = torch.zeros_like(feats)
        if feats.size(0) == 0 or out.size(0) == 0:
            return grad_feats, None, None
        kept = point2voxel >= 0
        idx = point2voxel.clamp(min=0)
        if ctx.reduce_type == "max":
            num, channels = feats.shape
            points = torch.arange(num, device=feats.device).unsqueeze(1).expand(-1, channels)
            hits = (feats == out[idx]) & kept.unsqueeze(1)
            # The first point holding each voxel channel's maximum takes its gradient.
            source = out.new_full(out.shape, num, dtype=torch.long)
            source.scatter_reduce_(
                0, idx.unsqueeze(1).expand(-1, channels), torch.where(hits, points, num), "amin"
            )
            found = source < num
            cols = torch.arange(channels, device=feats.device).expand_as(source)
            grad_feats[source[found], cols[found]] = grad_out[found]
        else:
            scale = grad_out[idx]
            if ctx.reduce_type == "mean":
                scale = scale / counts[idx].unsqueeze(1).to(scale.dtype)
            grad_feats = torch.where(kept.unsqueeze(1), scale, grad_feats)
        return grad_feats, None, None


def dynamic_scatter(
    feats: Tensor, coors: Tensor, reduce_type: str = "max"
) -> tuple[Tensor, Tensor]:
    """Reduce the features of the points that share voxel coordinates, as mmcv's op.

    Args:
        feats: (N, C) point features.
        coors: (N, ndim) integer voxel coordinates; a row with a negative entry is dropped.
        reduce_type: ``'max'``, ``'sum'`` or ``'mean'``.

    Returns:
        ``(voxel_feats, voxel_coors)``: (M, C) reduced features and the (M, ndim) unique
        coordinates, sorted lexicographically, in ``coors``'s dtype. Differentiable in ``feats``.

    Raises:
        ValueError: On mismatched shapes or an unknown ``reduce_type``.
        TypeError: When ``feats`` is not floating point or ``coors`` is.
    """
    return _DynamicScatter.apply(feats, coors, reduce_type)


class DynamicScatter(nn.Module):
    """Scatter points into voxels, as mmcv's ``DynamicScatter`` (max, or mean if averaging).

    Args:
        voxel_size: The voxel size (x, y, z), kept for mmcv's signature.
        point_cloud_range: (x_min, y_min, z_min, x_max, y_max, z_max), kept likewise.
        average_points: Reduce by mean instead of max.

    Raises:
        ValueError: At ``forward``, an unknown reduction, or ``points`` / ``coors`` not ``(N, C)``
            / ``(N, ndim)`` with one ``N``.
        TypeError: At ``forward``, ``points`` not floating point or ``coors`` not integer.
    """

    def __init__(
        self, voxel_size: Sequence[float], point_cloud_range: Sequence[float], average_points: bool
    ) -> None:
        super().__init__()
        self.voxel_size = voxel_size
        self.point_cloud_range = point_cloud_range
        self.average_points = average_points

    def forward_single(self, points: Tensor, coors: Tensor) -> tuple[Tensor, Tensor]:
        """Scatter one sample's points (coors without a batch column)."""
        reduce = "mean" if self.average_points else "max"
        return dynamic_scatter(points.contiguous(), coors.contiguous(), reduce)

    def forward(self, points: Tensor, coors: Tensor) -> tuple[Tensor, Tensor]:
        """Scatter points into voxels; (N, 4) coors have the batch index first.

        A batched call reduces the whole batch at once (the batch index is one more coordinate),
        which gives mmcv's per-sample loop's result: samples in order, each one's voxels sorted.
        """
        if coors.size(-1) == 3:
            return self.forward_single(points, coors)
        if coors.size(0) == 0:
            return self.forward_single(points, coors)
        # mmcv's batch count is the last row's batch index + 1; rows past it are not scattered.
        batch_size = coors[-1, 0] + 1
        in_batch = coors[:, 0] < batch_size
        return self.forward_single(points[in_batch], coors[in_batch])

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(voxel_size={self.voxel_size}, "
            f"point_cloud_range={self.point_cloud_range}, average_points={self.average_points})"
        )
