"""Point-cloud voxelization (mmcv.ops.voxelize), hard and dynamic, in vectorized PyTorch.

Follows mmcv-full's CPU kernel: a point's voxel is ``floor((p - range_min) / voxel_size)`` per
axis (x, y, z), returned in (z, y, x) order as int32; points outside the grid get ``-1`` (dynamic)
or are dropped (hard). Hard voxelization numbers voxels in order of their first point, keeps at
most ``max_voxels`` voxels and the first ``max_points`` points of each, and zero-pads the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union

import torch
from torch import Tensor, nn
from torch.nn.modules.utils import _pair

__all__ = ["Voxelization", "voxelization"]

FloatSeq = Union[Sequence[float], Tensor, float]  # noqa: UP007 (a runtime alias)


def _as_float_tensor(value: FloatSeq, length: int, name: str, device: torch.device) -> Tensor:
    """Return ``value`` as a float32 tensor of ``length`` numbers (mmcv casts these to float)."""
    out = torch.as_tensor(value, dtype=torch.float32, device=device).reshape(-1)
    if out.numel() == 1 and length > 1:
        out = out.expand(length)
    if out.numel() != length:
        raise ValueError(f"voxelization: {name} must hold {length} numbers, got {out.numel()}")
    return out


def _grid_size(voxel_size: Tensor, coors_range: Tensor) -> Tensor:
    """Voxels per axis (x, y, z): ``round((max - min) / size)`` in float32, halves away from 0."""
    ratio = (coors_range[3:] - coors_range[:3]) / voxel_size
    return (torch.sign(ratio) * torch.floor(ratio.abs() + 0.5)).long()


def _point_coors(points: Tensor, voxel_size: Tensor, coors_range: Tensor) -> Tensor:
    """Per point, its voxel as int32 (z, y, x), or ``-1`` in every column when out of the grid."""
    dtype = torch.promote_types(points.dtype, torch.float32)
    xyz = points[:, :3].to(dtype)
    cells = torch.floor((xyz - coors_range[:3].to(dtype)) / voxel_size.to(dtype))
    grid = _grid_size(voxel_size, coors_range).to(cells.device)
    inside = ((cells >= 0) & (cells < grid)).all(dim=1, keepdim=True)
    # NaN coordinates fail both comparisons, so they count as outside, as in mmcv's kernel.
    coors = torch.where(inside, cells, torch.full_like(cells, -1)).to(torch.int32)
    return coors.flip(1)


def _check_points(points: Tensor) -> None:
    if not isinstance(points, Tensor):
        raise TypeError(f"voxelization: points must be a torch.Tensor, got {type(points).__name__}")
    if points.dim() != 2 or points.size(1) < 3:
        raise ValueError(
            f"voxelization: points must have shape (N, >=3) with x, y, z first, got "
            f"{tuple(points.shape)}"
        )
    if not points.is_floating_point():
        raise TypeError(f"voxelization: points must be floating point, got {points.dtype}")


def _hard_voxelize(
    points: Tensor, coors: Tensor, grid: Tensor, max_points: int, max_voxels: int
) -> tuple[Tensor, Tensor, Tensor]:
    """Group the in-grid points by voxel, in order of each voxel's first point."""
    num_features = points.size(1)
    valid = torch.nonzero(coors[:, 0] >= 0).squeeze(1)
    nx, ny = int(grid[0]), int(grid[1])
    c = coors[valid].long()
    key = (c[:, 0] * ny + c[:, 1]) * nx + c[:, 2]
    # A stable sort keeps each voxel's points in input order; runs of one key are one voxel.
    key_sorted, order = torch.sort(key, stable=True)
    point_sorted = valid[order]
    starts_mask = torch.ones_like(key_sorted, dtype=torch.bool)
    starts_mask[1:] = key_sorted[1:] != key_sorted[:-1]
    group = torch.cumsum(starts_mask, 0) - 1
    starts = torch.nonzero(starts_mask).squeeze(1)
    counts = torch.diff(starts, append=starts.new_tensor([key_sorted.numel()]))
    first_point = point_sorted[starts]
    # Voxels are numbered by their first point, as mmcv's kernel meets them.
    voxel_rank = torch.empty_like(first_point)
    by_first = torch.argsort(first_point)
    voxel_rank[by_first] = torch.arange(by_first.numel(), device=points.device)
    num_voxels = min(by_first.numel(), max_voxels)
    slot = torch.arange(key_sorted.numel(), device=points.device) - starts[group]
    voxel_of_point = voxel_rank[group]
    keep = (voxel_of_point < max_voxels) & (slot < max_points)
    voxels = points.new_zeros((num_voxels, max_points, num_features))
    voxels[voxel_of_point[keep], slot[keep]] = points[point_sorted[keep]]
    kept_groups = by_first[:num_voxels]
    voxel_coors = coors[first_point[kept_groups]]
    num_points = counts[kept_groups].clamp(max=max_points).to(torch.int32)
    return voxels, voxel_coors, num_points


@torch.no_grad()
def voxelization(
    points: Tensor,
    voxel_size: FloatSeq,
    coors_range: FloatSeq,
    max_points: int = 35,
    max_voxels: int = 20000,
    deterministic: bool = True,
) -> Tensor | tuple[Tensor, Tensor, Tensor]:
    """Convert points (N, >=3) to voxels, as mmcv's ``voxelization``.

    Args:
        points: (N, C) points, x, y, z in the first three columns, any further columns
            (e.g. reflectivity) carried along.
        voxel_size: The voxel size (x, y, z).
        coors_range: The grid range (x_min, y_min, z_min, x_max, y_max, z_max).
        max_points: Points kept per voxel; -1 selects dynamic voxelization.
        max_voxels: Voxels kept; -1 selects dynamic voxelization.
        deterministic: Accepted for mmcv's signature; this implementation is always
            deterministic (mmcv's CPU order).

    Returns:
        Dynamic: the (N, 3) int32 voxel coordinates (z, y, x) of each point, ``-1`` for
        points outside the range. Hard: ``(voxels, coors, num_points_per_voxel)`` of shapes
        (M, max_points, C), (M, 3) int32 and (M,) int32, voxels zero-padded.

    Raises:
        TypeError: When ``points`` is not a floating-point tensor.
        ValueError: When ``points`` is not (N, >=3), or the sizes do not hold 3 and 6 numbers.
    """
    _check_points(points)
    size = _as_float_tensor(voxel_size, 3, "voxel_size", points.device)
    bounds = _as_float_tensor(coors_range, 6, "coors_range", points.device)
    coors = _point_coors(points, size, bounds)
    if max_points == -1 or max_voxels == -1:
        return coors
    if max_points < 0 or max_voxels < 0:
        raise ValueError(
            f"voxelization: max_points and max_voxels must be >= 0 (or -1 for dynamic "
            f"voxelization), got {max_points} and {max_voxels}"
        )
    return _hard_voxelize(points, coors, _grid_size(size, bounds), max_points, max_voxels)


class Voxelization(nn.Module):
    """Convert points (N, >=3) to voxels, as mmcv's ``Voxelization`` module.

    Args:
        voxel_size: The voxel size (x, y, z).
        point_cloud_range: (x_min, y_min, z_min, x_max, y_max, z_max).
        max_num_points: Points kept per voxel; -1 means dynamic voxelization.
        max_voxels: Voxels kept, one int or (training, testing).
        deterministic: Accepted for mmcv's signature (always deterministic here).

    Raises:
        RuntimeError: ``voxel_size`` and ``point_cloud_range`` do not hold 3 and 6 numbers
            (torch's broadcasting names the sizes).
        TypeError: At ``forward``, ``input`` is not a floating-point tensor.
        ValueError: At ``forward``, ``input`` is not ``(N, >=3)``, or ``max_num_points`` /
            ``max_voxels`` below -1.
    """

    def __init__(
        self,
        voxel_size: Sequence[float],
        point_cloud_range: Sequence[float],
        max_num_points: int,
        max_voxels: tuple[int, int] | int = 20000,
        deterministic: bool = True,
    ) -> None:
        super().__init__()
        self.voxel_size = voxel_size
        self.point_cloud_range = point_cloud_range
        self.max_num_points = max_num_points
        self.max_voxels = max_voxels if isinstance(max_voxels, tuple) else _pair(max_voxels)
        self.deterministic = deterministic
        size = torch.tensor(voxel_size, dtype=torch.float32)
        bounds = torch.tensor(point_cloud_range, dtype=torch.float32)
        # mmcv rounds half to even here (torch.round); its kernel rounds half away from zero.
        self.grid_size = torch.round((bounds[3:] - bounds[:3]) / size).long()
        # (x, y) cells -> [1, y, x], the (d, h, w) shape of the BEV feature.
        self.pcd_shape = [*self.grid_size[:2], 1][::-1]

    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor, Tensor]:  # noqa: A002
        """Voxelize ``input`` with the training or the testing ``max_voxels``."""
        max_voxels = self.max_voxels[0] if self.training else self.max_voxels[1]
        return voxelization(
            input,
            self.voxel_size,
            self.point_cloud_range,
            self.max_num_points,
            max_voxels,
            self.deterministic,
        )

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(voxel_size={self.voxel_size}, "
            f"point_cloud_range={self.point_cloud_range}, "
            f"max_num_points={self.max_num_points}, max_voxels={self.max_voxels}, "
            f"deterministic={self.deterministic})"
        )
