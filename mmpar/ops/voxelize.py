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


def _point_coors(points: Tensor, voxel_size: Tensor, coors_range: Tensor, grid: Tensor) -> Tensor:
    """Per point, its voxel as int32 (z, y, x), or ``-1`` in every column when out of the grid."""
    dtype = torch.promote_types(points.dtype, torch.float32)
    # Rows x, y, z of length N: per-axis work on contiguous rows is several times faster than
    # reducing over the 3-wide last dim of (N, 3).
    xyz = points[:, :3].t().contiguous().to(dtype)
    cells = ((xyz - coors_range[:3, None].to(dtype)) / voxel_size[:, None].to(dtype)).floor_()
    # NaN coordinates fail both comparisons, so they count as outside, as in mmcv's kernel.
    ok = (cells >= 0).logical_and_(cells < grid[:, None].to(dtype))
    inside = ok[0].logical_and_(ok[1]).logical_and_(ok[2])
    rows = torch.where(inside, cells, -1.0).to(torch.int32)
    return torch.stack([rows[2], rows[1], rows[0]], 1)


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


# Dense per-cell tables are used while the grid has at most this many cells per point (plus a
# floor); larger grids first compress the occupied cells with torch.unique.
_DENSE_CELLS_PER_POINT = 16
_DENSE_CELLS_FLOOR = 1 << 20


def _compact_cells(key: Tensor, num_cells: int) -> tuple[Tensor, int]:
    """Cell ids made small enough for dense tables (the identity for a small grid)."""
    if num_cells <= max(_DENSE_CELLS_FLOOR, _DENSE_CELLS_PER_POINT * key.numel()):
        return key, num_cells
    unique, inverse = torch.unique(key, return_inverse=True)
    return inverse, unique.numel()


def _slots(cell: Tensor, is_first: Tensor, num_cells: int, max_points: int) -> Tensor:
    """Each point's rank among the points of its cell, in input order (>= max_points: dropped).

    ``is_first`` marks each cell's first point (rank 0). Later rounds peel one point per cell
    (the earliest left, found with a scatter min), which is cheaper than sorting while few
    cells hold many points; what remains after the rounds that pay off is ranked with one
    stable sort.
    """
    n = cell.numel()
    slot = torch.full_like(cell, max_points)
    slot[is_first] = 0
    left = torch.nonzero(~is_first).squeeze(1)
    table = torch.empty(num_cells, dtype=torch.long, device=cell.device)
    rank = 1
    while left.numel() > n // 8 and rank < max_points:
        left_cell = cell[left]
        table.fill_(n).scatter_reduce_(0, left_cell, left, "amin")
        first = table[left_cell] == left
        slot[left[first]] = rank
        left = left[~first]
        rank += 1
    if left.numel() and rank < max_points:
        # Stable: equal cells keep input order, so a run's position is the rank after `rank`.
        sorted_cell, order = torch.sort(cell[left], stable=True)
        starts = torch.ones_like(sorted_cell, dtype=torch.bool)
        starts[1:] = sorted_cell[1:] != sorted_cell[:-1]
        start_pos = torch.nonzero(starts).squeeze(1)
        run = torch.cumsum(starts, 0) - 1
        within = torch.arange(sorted_cell.numel(), device=cell.device) - start_pos[run]
        slot[left[order]] = (rank + within).clamp(max=max_points)
    return slot


def _hard_voxelize(
    points: Tensor, coors: Tensor, grid: Tensor, max_points: int, max_voxels: int
) -> tuple[Tensor, Tensor, Tensor]:
    """Group the in-grid points by voxel, in order of each voxel's first point."""
    num_features = points.size(1)
    valid = torch.nonzero(coors[:, 0] >= 0).squeeze(1)
    nx, ny, nz = (int(v) for v in grid.tolist())
    c = coors[valid].long()
    cell, num_cells = _compact_cells((c[:, 0] * ny + c[:, 1]) * nx + c[:, 2], nx * ny * nz)
    n = cell.numel()
    order = torch.arange(n, device=points.device)
    # The first point of each cell; voxels are numbered as mmcv's kernel meets those.
    first_of_cell = torch.full((num_cells,), n, dtype=torch.long, device=points.device)
    first_of_cell.scatter_reduce_(0, cell, order, "amin")
    first_of_point = first_of_cell[cell]
    is_first = first_of_point == order
    voxel_of_first = torch.cumsum(is_first, 0) - 1
    num_voxels = min(int(voxel_of_first[-1]) + 1 if n else 0, max_voxels)
    voxel = voxel_of_first[first_of_point]
    slot = _slots(cell, is_first, num_cells, max_points) if max_points else torch.zeros_like(cell)
    dest = voxel * max_points + slot
    source = valid
    keep = (voxel < max_voxels) & (slot < max_points)
    if not bool(keep.all()):
        # Only when voxels or points overflow; the common case skips two gathers.
        kept = torch.nonzero(keep).squeeze(1)
        dest, source = dest[kept], valid[kept]
    voxels = points.new_zeros((num_voxels * max_points, num_features))
    voxels.index_copy_(0, dest, points[source])
    firsts = valid[torch.nonzero(is_first).squeeze(1)[:num_voxels]]
    counts = torch.bincount(voxel, minlength=num_voxels)[:num_voxels]
    num_points = counts.clamp(max=max_points).to(torch.int32)
    return voxels.view(num_voxels, max_points, num_features), coors[firsts], num_points


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
    grid = _grid_size(size, bounds)
    coors = _point_coors(points, size, bounds, grid)
    if max_points == -1 or max_voxels == -1:
        return coors
    if max_points < 0 or max_voxels < 0:
        raise ValueError(
            f"voxelization: max_points and max_voxels must be >= 0 (or -1 for dynamic "
            f"voxelization), got {max_points} and {max_voxels}"
        )
    return _hard_voxelize(points, coors, grid, max_points, max_voxels)


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
