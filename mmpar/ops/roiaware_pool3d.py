"""RoI-aware 3D pooling of point features into box voxels (mmcv.ops.roiaware_pool3d).

Each RoI is split into ``out_x * out_y * out_z`` voxels; the points inside the RoI are
binned into them as mmcv-full's kernel bins them, each voxel keeps its first
``max_pts_per_voxel - 1`` points (in point order: mmcv's counter takes one slot), and the
features are max- or average-pooled per voxel. Vectorized over RoIs, points and channels.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from mmpar.utils import is_tuple_of

from ._autograd import op_function
from ._points_common import box_frame, check, check_points, in_boxes_mask

__all__ = ["RoIAwarePool3d", "RoIAwarePool3dFunction"]

_OP = "RoIAwarePool3d"


def _voxel_of_points(
    rois: Tensor, pts: Tensor, out_size: tuple[int, int, int]
) -> tuple[Tensor, Tensor]:
    """``(roi, point)`` index pairs of the points inside each RoI, and their flat voxel."""
    inside = in_boxes_mask(pts.unsqueeze(0), rois.unsqueeze(0))[0]
    pt, roi = inside.nonzero(as_tuple=True)  # pairs sorted by point
    box = rois[roi]
    local_x, local_y = box_frame(pts[pt], box)
    out_x, out_y, out_z = out_size
    x_size, y_size, z_size = box[:, 3], box[:, 4], box[:, 5]
    # The kernel's float expressions: offset from the box's low corner over the voxel size,
    # truncated, then clamped into the grid.
    x_idx = ((local_x + x_size / 2) / (x_size / out_x)).long().clamp(0, out_x - 1)
    y_idx = ((local_y + y_size / 2) / (y_size / out_y)).long().clamp(0, out_y - 1)
    z_idx = ((pts[pt, 2] - box[:, 2]) / (z_size / out_z)).long().clamp(0, out_z - 1)
    voxel = (x_idx * out_y + y_idx) * out_z + z_idx
    return torch.stack([roi, pt]), voxel


def _pool(
    rois: Tensor,
    pts: Tensor,
    pts_feature: Tensor,
    out_size: tuple[int, int, int],
    max_pts_per_voxel: int,
    mode: int,
) -> Tensor:
    num_rois, channels = rois.shape[0], pts_feature.shape[1]
    num_voxels = out_size[0] * out_size[1] * out_size[2]
    with torch.no_grad():
        pairs, voxel = _voxel_of_points(rois, pts, out_size)
        cell = pairs[0] * num_voxels + voxel  # global voxel id of each (roi, point) pair
        # Rank of each point within its voxel, in point order: sort by cell (stable keeps
        # the point order inside a cell), then subtract the cell's first position.
        cell_sorted, perm = cell.sort(stable=True)
        position = torch.arange(cell.numel(), device=cell.device)
        is_first = torch.ones_like(cell_sorted, dtype=torch.bool)
        is_first[1:] = cell_sorted[1:] != cell_sorted[:-1]
        first_pos = torch.cummax(torch.where(is_first, position, 0), 0)[0]
        kept = (position - first_pos) < max_pts_per_voxel - 1
        cell, point = cell_sorted[kept], pairs[1][perm][kept]
    total = num_rois * num_voxels
    feats = pts_feature[point]  # (P, C), differentiable
    if mode == 0:
        with torch.no_grad():
            index = cell.unsqueeze(1).expand(-1, channels)
            best = pts_feature.new_full((total, channels), float("-inf"))
            best.scatter_reduce_(0, index, feats, "amax", include_self=True)
            # The first point reaching the maximum, as the kernel's strict ">" scan keeps it.
            is_best = feats == best[cell]
            big = pts_feature.shape[0]
            pick = torch.where(is_best, point.unsqueeze(1).expand(-1, channels), big)
            argmax = torch.full((total, channels), big, dtype=torch.long, device=pts.device)
            argmax.scatter_reduce_(0, index, pick, "amin", include_self=True)
            found = argmax < big
        gathered = pts_feature.gather(0, torch.where(found, argmax, 0))
        pooled = torch.where(found, gathered, 0)  # empty voxels: 0, and no gradient
    else:
        sums = pts_feature.new_zeros((total, channels)).index_add(0, cell, feats)
        counts = torch.zeros(total, dtype=pts_feature.dtype, device=pts.device)
        counts.index_add_(0, cell, torch.ones_like(cell, dtype=pts_feature.dtype))
        pooled = sums / counts.clamp(min=1).unsqueeze(1)
    return pooled.view(num_rois, *out_size, channels)


class RoIAwarePool3d(nn.Module):
    """Pool point features into the voxels of each 3D RoI (PartA2's RoI-aware pooling).

    Args:
        out_size: Voxels per RoI: ``n`` or ``(n_x, n_y, n_z)``.
        max_pts_per_voxel: Point slots per voxel, one taken by mmcv's counter: a voxel pools
            its first ``max_pts_per_voxel - 1`` points. Default: 128.
        mode: ``'max'`` or ``'avg'``. Default: ``'max'``.

    Raises:
        AssertionError: For another ``mode`` (as mmcv asserts).
    """

    def __init__(
        self, out_size: int | tuple, max_pts_per_voxel: int = 128, mode: str = "max"
    ) -> None:
        super().__init__()
        self.out_size = out_size
        self.max_pts_per_voxel = max_pts_per_voxel
        assert mode in ["max", "avg"], f"RoIAwarePool3d: mode must be 'max' or 'avg', got {mode!r}"
        pool_mapping = {"max": 0, "avg": 1}
        self.mode = pool_mapping[mode]

    def forward(self, rois: Tensor, pts: Tensor, pts_feature: Tensor) -> Tensor:
        """Pool the features of the points inside each RoI.

        Differentiable in ``pts_feature`` (max: to the first point reaching each maximum;
        avg: shared equally by the pooled points), as mmcv's backward.

        Args:
            rois: ``(N, 7)`` RoIs ``(x, y, z, x_size, y_size, z_size, rz)`` in LiDAR
                coordinates, ``(x, y, z)`` the bottom centre.
            pts: ``(npoints, 3)`` point coordinates.
            pts_feature: ``(npoints, C)`` point features.

        Returns:
            ``(N, out_x, out_y, out_z, C)`` pooled features; an empty voxel holds 0.

        Raises:
            TypeError: On non-floating inputs.
            AssertionError: On wrong shapes or ``out_size`` (as mmcv asserts).
            ValueError: When a grid side is not in ``[1, 255]`` (mmcv packs it in 8 bits) or
                ``max_pts_per_voxel < 2``.
        """
        out_size = self.out_size
        if isinstance(out_size, int):
            out_size = (out_size,) * 3
        assert len(out_size) == 3 and is_tuple_of(tuple(out_size), int), (
            f"RoIAwarePool3d: out_size must be an int or 3 ints, got {self.out_size!r}"
        )
        check(
            all(1 <= s <= 255 for s in out_size),
            _OP,
            f"out_size sides must be in [1, 255], got {tuple(out_size)}",
        )
        check(
            self.max_pts_per_voxel >= 2,
            _OP,
            f"max_pts_per_voxel must be >= 2 (one slot is mmcv's counter), got "
            f"{self.max_pts_per_voxel}",
        )
        check_points(rois, _OP, "rois", 2, 7)
        check_points(pts, _OP, "pts", 2, 3)
        check_points(pts_feature, _OP, "pts_feature", 2)
        check(
            pts.shape[0] == pts_feature.shape[0],
            _OP,
            f"pts and pts_feature must have as many rows, got {pts.shape[0]} and "
            f"{pts_feature.shape[0]}",
            AssertionError,
        )
        return _pool(
            rois,
            pts.to(rois.dtype),
            pts_feature,
            tuple(out_size),
            self.max_pts_per_voxel,
            self.mode,
        )


def _roiaware_pool(
    rois: Tensor,
    pts: Tensor,
    pts_feature: Tensor,
    out_size: int | tuple,
    max_pts_per_voxel: int,
    mode: int,
) -> Tensor:
    assert mode in (0, 1), f"{_OP}Function: mode must be 0 (max) or 1 (avg), got {mode!r}"
    return RoIAwarePool3d(out_size, max_pts_per_voxel, ("max", "avg")[mode])(rois, pts, pts_feature)


RoIAwarePool3dFunction = op_function(
    "RoIAwarePool3dFunction",
    _roiaware_pool,
    __name__,
    doc="""mmcv's autograd function of :class:`RoIAwarePool3d`; ``mode`` is 0 (max) or 1 (avg).""",
)
