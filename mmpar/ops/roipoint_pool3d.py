"""Sample the points inside each 3D box with their features (mmcv.ops.roipoint_pool3d)."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from ._autograd import op_function
from ._points_common import check, check_points, first_true_indices, in_boxes_mask

__all__ = ["RoIPointPool3d", "RoIPointPool3dFunction"]

_OP = "RoIPointPool3d"


class RoIPointPool3d(nn.Module):
    """Pool a fixed number of points (coordinates and features) from each 3D box.

    Each box takes its first ``num_sampled_points`` points in point order, repeated
    cyclically when it holds fewer, as mmcv's kernel does.

    Args:
        num_sampled_points: Points per box. Default: 512.
    """

    def __init__(self, num_sampled_points: int = 512) -> None:
        super().__init__()
        self.num_sampled_points = num_sampled_points

    def forward(
        self, points: Tensor, point_features: Tensor, boxes3d: Tensor
    ) -> tuple[Tensor, Tensor]:
        """Pool the points of each box.

        Not differentiable (mmcv's backward raises ``NotImplementedError``; here the outputs
        simply carry no gradient).

        Args:
            points: ``(B, N, 3)`` point coordinates.
            point_features: ``(B, N, C)`` point features.
            boxes3d: ``(B, M, 7)`` boxes ``(x, y, z, dx, dy, dz, rz)``, ``z`` the bottom.

        Returns:
            ``(pooled_features, pooled_empty_flag)``: ``(B, M, num_sampled_points, 3 + C)``
            coordinates then features of the sampled points (zeros for an empty box), and
            ``(B, M)`` int32, 1 where the box holds no point.

        Raises:
            TypeError: On non-floating inputs.
            AssertionError: On wrong shapes (as mmcv asserts).
        """
        check_points(points, _OP, "points", 3, 3)
        check_points(point_features, _OP, "point_features", 3)
        check_points(boxes3d, _OP, "boxes3d", 3, 7)
        batch, n = points.shape[:2]
        check(
            point_features.shape[:2] == points.shape[:2] and boxes3d.shape[0] == batch,
            _OP,
            f"points (B, N, 3), point_features (B, N, C) and boxes3d (B, M, 7) must agree in "
            f"B and N, got {tuple(points.shape)}, {tuple(point_features.shape)} and "
            f"{tuple(boxes3d.shape)}",
            AssertionError,
        )
        samples = self.num_sampled_points
        with torch.no_grad():
            inside = in_boxes_mask(points, boxes3d.to(points.dtype))  # (B, N, M)
            pos, count = first_true_indices(inside.transpose(1, 2), samples)  # (B, M, S)
            # Fewer points than slots: slot k repeats the (k mod count)-th point.
            slot = torch.arange(samples, device=points.device)
            cyclic = slot % count.clamp(min=1).unsqueeze(-1)
            pos = pos.gather(-1, cyclic)
            empty = count == 0
            rows = torch.where(empty.unsqueeze(-1), 0, pos)
            table = torch.cat([points, point_features.to(points.dtype)], dim=2)  # (B, N, 3 + C)
            flat = rows.reshape(batch, -1, 1).expand(-1, -1, table.shape[2])
            pooled = table.gather(1, flat).view(*rows.shape, table.shape[2])
            pooled = pooled.masked_fill(empty[..., None, None], 0)
        return pooled.to(point_features.dtype), empty.to(torch.int32)


def _roipoint_pool(
    points: Tensor, point_features: Tensor, boxes3d: Tensor, num_sampled_points: int
) -> tuple[Tensor, Tensor]:
    return RoIPointPool3d(num_sampled_points)(points, point_features, boxes3d)


RoIPointPool3dFunction = op_function(
    "RoIPointPool3dFunction",
    _roipoint_pool,
    __name__,
    doc="""mmcv's autograd function of :class:`RoIPointPool3d` (no gradient, as in mmcv).""",
)
