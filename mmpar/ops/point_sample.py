"""mmcv 1.x's ``mmcv.ops.point_sample``: features at points given in ``[0, 1]`` coordinates.

Also the RoI/image coordinate conversions of PointRend, and ``SimpleRoIAlign``.

Everything is plain PyTorch (``F.grid_sample``); :func:`bilinear_grid_sample` is the same
bilinear sampling written with ``gather`` only, for exporters that lack ``grid_sample``.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.modules.utils import _pair

from ._roi_checks import check_rois

__all__ = [
    "SimpleRoIAlign",
    "abs_img_point_to_rel_img_point",
    "bilinear_grid_sample",
    "denormalize",
    "generate_grid",
    "get_shape_from_feature_map",
    "is_in_onnx_export_without_custom_ops",
    "normalize",
    "point_sample",
    "rel_roi_point_to_abs_img_point",
    "rel_roi_point_to_rel_img_point",
]


def bilinear_grid_sample(im: Tensor, grid: Tensor, align_corners: bool = False) -> Tensor:
    """Bilinear ``grid_sample`` with zero padding, written with ``gather`` only.

    Args:
        im: Feature map, shape (N, C, H, W).
        grid: Sampling locations in ``[-1, 1]`` (x, y), shape (N, Hg, Wg, 2).
        align_corners: As in :func:`torch.nn.functional.grid_sample`: whether -1 and 1 are the
            centres (True) or the outer edges (False) of the corner pixels.

    Returns:
        The sampled features, shape (N, C, Hg, Wg).
    """
    n, c, h, w = im.shape
    gn, gh, gw, _ = grid.shape
    assert n == gn, f"the batch sizes of im ({n}) and grid ({gn}) differ"
    x = grid[..., 0].reshape(n, -1)
    y = grid[..., 1].reshape(n, -1)
    if align_corners:
        x = (x + 1) / 2 * (w - 1)
        y = (y + 1) / 2 * (h - 1)
    else:
        x = ((x + 1) * w - 1) / 2
        y = ((y + 1) * h - 1) / 2
    x0 = torch.floor(x)
    y0 = torch.floor(y)
    # One pixel of zeros around the map stands for "outside"; indices beyond it are clamped
    # onto it, so every tap outside the image reads zero.
    padded = F.pad(im, [1, 1, 1, 1]).reshape(n, c, -1)
    pw = w + 2
    out = im.new_zeros(n, c, x.shape[1])
    for dx in (0, 1):
        for dy in (0, 1):
            xi = x0 + dx
            yi = y0 + dy
            weight = (1 - (x - xi).abs()) * (1 - (y - yi).abs())
            col = (xi.long() + 1).clamp(0, pw - 1)
            row = (yi.long() + 1).clamp(0, h + 1)
            index = (row * pw + col).unsqueeze(1).expand(-1, c, -1)
            out = out + torch.gather(padded, 2, index) * weight.unsqueeze(1)
    return out.reshape(n, c, gh, gw)


def is_in_onnx_export_without_custom_ops() -> bool:
    """Whether an ONNX export is running (mmpar never has mmcv's custom ONNX Runtime ops)."""
    return torch.onnx.is_in_onnx_export()


def normalize(grid: Tensor) -> Tensor:
    """Map coordinates from ``[-1, 1]`` to ``[0, 1]``.

    Args:
        grid: Coordinates in ``[-1, 1]``.

    Returns:
        The same coordinates in ``[0, 1]``.
    """
    return (grid + 1.0) / 2.0


def denormalize(grid: Tensor) -> Tensor:
    """Map coordinates from ``[0, 1]`` to ``[-1, 1]`` (the range of ``grid_sample``).

    Args:
        grid: Coordinates in ``[0, 1]``.

    Returns:
        The same coordinates in ``[-1, 1]``.
    """
    return grid * 2.0 - 1.0


def generate_grid(num_grid: int, size: tuple[int, int], device: torch.device) -> Tensor:
    """The centres of a regular ``size`` grid of cells in ``[0, 1] x [0, 1]``, per region.

    Args:
        num_grid: The number of regions (the grid is repeated for each).
        size: (height, width) of the grid.
        device: Device of the result.

    Returns:
        Coordinates (x, y), shape (num_grid, size[0] * size[1], 2).
    """
    h, w = size
    ys = (torch.arange(h, device=device, dtype=torch.float32) + 0.5) / h
    xs = (torch.arange(w, device=device, dtype=torch.float32) + 0.5) / w
    grid_y, grid_x = torch.meshgrid(ys, xs, indexing="ij")
    grid = torch.stack([grid_x, grid_y], dim=-1).reshape(1, -1, 2)
    return grid.expand(num_grid, -1, -1)


def rel_roi_point_to_abs_img_point(rois: Tensor, rel_roi_points: Tensor) -> Tensor:
    """Turn points relative to their RoI into absolute image coordinates.

    Args:
        rois: Boxes (x1, y1, x2, y2), shape (N, 4), or with a leading batch index, (N, 5).
        rel_roi_points: Points in ``[0, 1]`` relative to each RoI, shape (N, P, 2).

    Returns:
        Absolute image coordinates, shape (N, P, 2) (no gradient flows through).
    """
    with torch.no_grad():
        assert rel_roi_points.size(0) == rois.size(0)
        assert rois.dim() == 2
        assert rel_roi_points.dim() == 3
        assert rel_roi_points.size(2) == 2
        if rois.size(1) == 5:
            rois = rois[:, 1:]
        origin = rois[:, None, :2]
        extent = rois[:, None, 2:4] - origin
        return rel_roi_points * extent + origin


def get_shape_from_feature_map(x: Tensor) -> Tensor:
    """The spatial size of a feature map as a float tensor (width, height), shape (1, 1, 2).

    Args:
        x: Feature map, shape (N, C, H, W).

    Returns:
        ``[[[W, H]]]`` on ``x``'s device.
    """
    return torch.tensor(x.shape[2:], device=x.device).flip(0).view(1, 1, 2).float()


def abs_img_point_to_rel_img_point(
    abs_img_points: Tensor, img: tuple | Tensor, spatial_scale: float = 1.0
) -> Tensor:
    """Turn absolute image coordinates into ``[0, 1]`` coordinates for :func:`point_sample`.

    Args:
        abs_img_points: Absolute coordinates (x, y), shape (N, P, 2).
        img: The (height, width) of the image or feature map, or the map itself (N, C, H, W).
        spatial_scale: Factor applied to the points (the feature map's stride inverse).
            Default: 1.

    Returns:
        Relative coordinates, shape (N, P, 2).
    """
    assert (isinstance(img, tuple) and len(img) == 2) or (
        isinstance(img, Tensor) and img.dim() == 4
    ), "img must be a (height, width) tuple or a 4-D feature map"
    if isinstance(img, tuple):
        h, w = img
        scale = torch.tensor([w, h], dtype=torch.float, device=abs_img_points.device).view(1, 1, 2)
    else:
        scale = get_shape_from_feature_map(img)
    return abs_img_points / scale * spatial_scale


def rel_roi_point_to_rel_img_point(
    rois: Tensor, rel_roi_points: Tensor, img: tuple | Tensor, spatial_scale: float = 1.0
) -> Tensor:
    """Turn points relative to their RoI into ``[0, 1]`` image coordinates.

    Args:
        rois: Boxes, shape (N, 4) or (N, 5) with a leading batch index.
        rel_roi_points: Points in ``[0, 1]`` relative to each RoI, shape (N, P, 2).
        img: The (height, width) of the image or feature map, or the map itself.
        spatial_scale: Factor applied to the points. Default: 1.

    Returns:
        Relative image coordinates, shape (N, P, 2).

    Raises:
        AssertionError: ``rois`` and ``rel_roi_points`` are not ``(N, 4 or 5)`` and ``(N, P,
            2)`` of one ``N``, or ``img`` is neither an ``(h, w)`` tuple nor a 4-D map (as mmcv).
    """
    abs_points = rel_roi_point_to_abs_img_point(rois, rel_roi_points)
    return abs_img_point_to_rel_img_point(abs_points, img, spatial_scale)


def point_sample(
    input: Tensor, points: Tensor, align_corners: bool = False, **kwargs: Any
) -> Tensor:
    """``grid_sample`` for points in ``[0, 1] x [0, 1]``, also given as a flat (N, P, 2) list.

    Args:
        input: Feature map, shape (N, C, H, W).
        points: Coordinates (x, y) in ``[0, 1]``, shape (N, P, 2) or (N, Hg, Wg, 2).
        align_corners: Passed to :func:`torch.nn.functional.grid_sample`. Default: False.
        **kwargs: Further arguments of ``grid_sample`` (``mode``, ``padding_mode``); ignored
            during an ONNX export, which uses :func:`bilinear_grid_sample` as mmcv does.

    Returns:
        Features at the points, shape (N, C, P) or (N, C, Hg, Wg).

    Raises:
        RuntimeError: ``points`` has another batch size than ``input`` or is not 3-D or 4-D
            (``grid_sample`` names the sizes).
    """
    flat = points.dim() == 3
    if flat:
        points = points.unsqueeze(2)
    if is_in_onnx_export_without_custom_ops():
        # As mmcv: exported graphs get the gather formulation (bilinear, zero padding only).
        output = bilinear_grid_sample(input, denormalize(points), align_corners=align_corners)
    else:
        output = F.grid_sample(input, denormalize(points), align_corners=align_corners, **kwargs)
    return output.squeeze(3) if flat else output


class SimpleRoIAlign(nn.Module):
    """RoI align of PointRend: bilinear samples at the cell centres of each RoI.

    Args:
        output_size: (height, width) of the output, or one int for both.
        spatial_scale: Factor from image to feature-map coordinates.
        aligned: If False, sample with ``align_corners=True`` (the legacy MMDetection way).
            Default: True.
    """

    def __init__(
        self, output_size: int | tuple[int, int], spatial_scale: float, aligned: bool = True
    ) -> None:
        super().__init__()
        self.output_size = _pair(output_size)
        self.spatial_scale = float(spatial_scale)
        # mmcv's RoI ops all carry this flag; here it is always False.
        self.use_torchvision = False
        self.aligned = aligned

    def forward(self, features: Tensor, rois: Tensor) -> Tensor:
        """Pool one (C, out_h, out_w) map per RoI.

        Args:
            features: Feature maps, shape (N, C, H, W).
            rois: (batch index, x1, y1, x2, y2) per RoI, shape (R, 5).

        Returns:
            RoI features, shape (R, C, out_h, out_w), in the order of ``rois``.

        Raises:
            AssertionError: ``rois`` is not ``(R, 5)``.
            IndexError: A batch index is outside ``[0, N)`` (mmcv drops such RoIs silently,
                leaving zeros).
        """
        check_rois("SimpleRoIAlign", rois, features.size(0))
        num_rois = rois.size(0)
        channels = features.size(1)
        rel_roi_points = generate_grid(num_rois, self.output_size, device=rois.device)
        out = features.new_zeros(num_rois, channels, self.output_size[0] * self.output_size[1])
        batch_inds = rois[:, 0].long()
        for batch_ind in range(features.size(0)):
            inds = torch.nonzero(batch_inds == batch_ind, as_tuple=True)[0]
            if inds.numel() == 0:
                continue
            feat = features[batch_ind : batch_ind + 1]
            rel_img_points = rel_roi_point_to_rel_img_point(
                rois[inds], rel_roi_points[inds], feat, self.spatial_scale
            ).reshape(1, -1, 2)
            # (1, C, R_b * P) -> (R_b, C, P)
            sampled = point_sample(feat, rel_img_points, align_corners=not self.aligned)
            sampled = sampled.reshape(channels, inds.numel(), -1).transpose(0, 1)
            out = out.index_copy(0, inds, sampled)
        return out.reshape(num_rois, channels, *self.output_size)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(output_size={self.output_size}, "
            f"spatial_scale={self.spatial_scale})"
        )
