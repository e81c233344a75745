"""RoIAlign over rotated boxes, as mmcv's ``roi_align_rotated`` / ``RoIAlignRotated``.

Batched PyTorch on any device: every bin's sample points of every RoI are computed at once
(RoIs with fewer adaptive samples than the largest are masked), sampled by mmcv's bilinear
rule (mmpar.ops._bilinear) and averaged. Differentiable in the features, as mmcv's op.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn.modules.utils import _pair

from mmpar.utils import deprecated_api_warning

from ._autograd import op_function
from ._bilinear import bilinear_pool, bin_sample_points

__all__ = ["RoIAlignRotated", "RoIAlignRotatedFunction", "roi_align_rotated"]


def check_rotated_rois(name: str, features: Tensor, rois: Tensor) -> None:
    """Raise ``ValueError`` unless ``features`` is ``(B, C, H, W)`` and ``rois`` ``(K, 6)``.

    The RoIs' batch indices must also lie in ``[0, B)``.
    """
    if features.dim() != 4:
        raise ValueError(f"{name}: features must be (B, C, H, W), got {tuple(features.shape)}")
    if rois.dim() != 2 or rois.size(1) != 6:
        raise ValueError(
            f"{name}: rois must be (K, 6) as (batch_index, x, y, w, h, angle), got "
            f"{tuple(rois.shape)}"
        )
    if rois.device != features.device:
        raise ValueError(
            f"{name}: rois are on {rois.device}, features on {features.device}: use one device"
        )
    if rois.numel() and ((rois[:, 0] < 0) | (rois[:, 0] >= features.size(0))).any():
        raise ValueError(
            f"{name}: a RoI's batch index is outside [0, {features.size(0)}) (the batch size); "
            "fix the rois' first column"
        )


def rotated_roi_samples(
    rois: Tensor,
    output_size: tuple[int, int],
    spatial_scale: float,
    sampling_ratio: int,
    offset: float,
    clockwise: bool,
    min_size_one: bool,
) -> tuple[Tensor, Tensor, Tensor]:
    """Sample points of each bin of each rotated RoI, following mmcv's kernels.

    Args:
        rois: ``(K, 6)`` as ``(batch_index, x, y, w, h, angle)``.
        output_size: ``(pooled_h, pooled_w)``.
        spatial_scale: Factor from RoI to feature coordinates.
        sampling_ratio: Samples per bin and axis; 0 for ``ceil(bin size)`` per RoI.
        offset: Subtracted from the scaled centre (0.5 for ``aligned``).
        clockwise: Angles turn clockwise (negated before use, as mmcv).
        min_size_one: Widen RoIs to at least 1 x 1 (mmcv's legacy, unaligned mode).

    Returns:
        ``(y, x, weight)``: coordinates ``(K, ph, pw, gh, gw)`` and each sample's weight
        ``(K, 1, 1, gh, gw)``: ``1 / count`` for the RoI's own grid, 0 for padding.
    """
    pooled_h, pooled_w = output_size
    rois = rois.detach()
    center_w = rois[:, 1] * spatial_scale - offset
    center_h = rois[:, 2] * spatial_scale - offset
    roi_w = rois[:, 3] * spatial_scale
    roi_h = rois[:, 4] * spatial_scale
    theta = -rois[:, 5] if clockwise else rois[:, 5]
    if min_size_one:
        roi_w = roi_w.clamp(min=1)
        roi_h = roi_h.clamp(min=1)
    yy, xx, weight = bin_sample_points(
        -roi_h / 2, -roi_w / 2, roi_h, roi_w, output_size, sampling_ratio
    )
    cos = torch.cos(theta)[:, None, None, None, None]
    sin = torch.sin(theta)[:, None, None, None, None]
    y = yy * cos - xx * sin + center_h[:, None, None, None, None]
    x = yy * sin + xx * cos + center_w[:, None, None, None, None]
    return y, x, weight


def roi_align_rotated(
    input: Tensor,  # noqa: A002 (mmcv's argument name)
    rois: Tensor,
    output_size: int | tuple[int, int],
    spatial_scale: float = 1.0,
    sampling_ratio: int = 0,
    aligned: bool = True,
    clockwise: bool = False,
) -> Tensor:
    """Average bilinear samples of each rotated box's bins into a fixed-size feature map.

    Args:
        input: Features ``(B, C, H, W)``.
        rois: ``(K, 6)`` as ``(batch_index, x_center, y_center, w, h, angle)``, angle in
            radians, in input-image pixels.
        output_size: ``(h, w)`` of each output map (an int for square).
        spatial_scale: Factor from RoI to feature-map coordinates (1 / stride).
        sampling_ratio: Samples per bin along each axis; 0 picks ``ceil(bin size)`` per RoI.
        aligned: Shift the RoI by -0.5 pixel (True), or mmcv's legacy mode (False: RoIs at
            least 1 x 1).
        clockwise: Angles turn clockwise in image space (else counter-clockwise).

    Returns:
        ``(K, C, h, w)`` pooled features, differentiable in ``input``.

    Raises:
        ValueError: ``input`` is not 4-D, ``rois`` not ``(K, 6)``, a batch index is out of
            range, or (``aligned``) a RoI has a negative size.
    """
    output_size = _pair(output_size)
    check_rotated_rois("roi_align_rotated", input, rois)
    if aligned and rois.numel() and (rois[:, 3:5] < 0).any():
        raise ValueError("roi_align_rotated: with aligned=True RoIs need a non-negative w and h")
    rois = rois.to(input.dtype)
    y, x, weight = rotated_roi_samples(
        rois,
        output_size,
        float(spatial_scale),
        int(sampling_ratio),
        0.5 if aligned else 0.0,
        clockwise,
        not aligned,
    )
    pooled = pool_rotated_rois(input, rois, y, x, weight)  # (K, ph, pw, C)
    return pooled.permute(0, 3, 1, 2).contiguous()


def pool_rotated_rois(
    features: Tensor, rois: Tensor, y: Tensor, x: Tensor, weight: Tensor
) -> Tensor:
    """Average the samples of :func:`rotated_roi_samples` per bin: ``(K, ph, pw, C)``."""
    count, pooled_h, pooled_w, grid_h, grid_w = y.shape
    batch = rois[:, 0].long()[:, None, None].expand(count, pooled_h, pooled_w).reshape(-1)
    weight = weight.expand_as(y).reshape(-1, grid_h * grid_w)
    pooled = bilinear_pool(
        features, batch, y.reshape(-1, grid_h * grid_w), x.reshape(-1, grid_h * grid_w), weight
    )
    return pooled.view(count, pooled_h, pooled_w, features.size(1))


class RoIAlignRotated(nn.Module):
    """Rotated RoIAlign as a layer: :func:`roi_align_rotated` with fixed settings.

    Args:
        output_size: ``(h, w)`` of each output map (an int for square).
        spatial_scale: Factor from RoI to feature-map coordinates.
        sampling_ratio: Samples per bin along each axis; 0 for adaptive.
        aligned: Half-pixel-aligned sampling (True) or mmcv's legacy one (False).
        clockwise: Angles turn clockwise in image space.

    Raises:
        ValueError: At ``forward``, ``input`` not 4-D, ``rois`` not ``(K, 6)`` or on another
            device, a batch index outside ``[0, N)``, or (``aligned``) a negative width or height.
    """

    @deprecated_api_warning(
        {"out_size": "output_size", "sample_num": "sampling_ratio"}, cls_name="RoIAlignRotated"
    )
    def __init__(
        self,
        output_size: int | tuple[int, int],
        spatial_scale: float,
        sampling_ratio: int = 0,
        aligned: bool = True,
        clockwise: bool = False,
    ) -> None:
        super().__init__()
        self.output_size = _pair(output_size)
        self.spatial_scale = float(spatial_scale)
        self.sampling_ratio = int(sampling_ratio)
        self.aligned = aligned
        self.clockwise = clockwise

    def forward(self, input: Tensor, rois: Tensor) -> Tensor:  # noqa: A002 (mmcv's name)
        """Pool ``input`` ``(B, C, H, W)`` over ``rois`` ``(K, 6)`` into ``(K, C, h, w)``."""
        return roi_align_rotated(
            input,
            rois,
            self.output_size,
            self.spatial_scale,
            self.sampling_ratio,
            self.aligned,
            self.clockwise,
        )

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(output_size={self.output_size}, "
            f"spatial_scale={self.spatial_scale}, sampling_ratio={self.sampling_ratio}, "
            f"aligned={self.aligned}, clockwise={self.clockwise})"
        )


RoIAlignRotatedFunction = op_function("RoIAlignRotatedFunction", roi_align_rotated, __name__)
