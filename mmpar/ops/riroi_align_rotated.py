"""Rotation-invariant RoIAlign (ReDet), as mmcv's ``riroi_align_rotated`` / ``RiRoIAlignRotated``.

Like :func:`~mmpar.ops.roi_align_rotated` (legacy alignment: RoIs at least 1 x 1, no half-pixel
shift), and each RoI's orientation channels are also rotated: the features have
``num_orientations`` channels per group, and output orientation ``o`` interpolates input
orientations ``o - k`` and ``o - k + 1`` (cyclically), where ``k + frac`` is the RoI's angle in
orientation steps. mmcv has this op on CUDA only; this follows its kernel, on any device.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from mmpar.utils import is_tuple_of

from ._autograd import op_function
from .roi_align_rotated import check_rotated_rois, pool_rotated_rois, rotated_roi_samples

__all__ = ["RiRoIAlignRotated", "RiRoIAlignRotatedFunction", "riroi_align_rotated"]


def riroi_align_rotated(
    features: Tensor,
    rois: Tensor,
    out_size: int | tuple[int, int],
    spatial_scale: float,
    num_samples: int = 0,
    num_orientations: int = 8,
    clockwise: bool = False,
) -> Tensor:
    """Rotation-invariant RoIAlign of rotated boxes.

    Args:
        features: ``(B, C * num_orientations, H, W)``, orientations innermost.
        rois: ``(K, 6)`` as ``(batch_index, x_center, y_center, w, h, angle)``.
        out_size: ``(h, w)`` of each output map (an int for square).
        spatial_scale: Factor from RoI to feature-map coordinates.
        num_samples: Samples per bin along each axis; 0 picks ``ceil(bin size)`` per RoI.
        num_orientations: Orientation channels per group.
        clockwise: Angles turn clockwise in image space.

    Returns:
        ``(K, C * num_orientations, h, w)``, differentiable in ``features``.

    Raises:
        TypeError: ``out_size`` is not an int or a pair of ints (as mmcv).
        ValueError: Bad shapes, a batch index out of range, or a channel count that is not a
            multiple of ``num_orientations``.
    """
    if isinstance(out_size, int):
        out_h = out_w = out_size
    elif is_tuple_of(out_size, int) and len(out_size) == 2:
        out_h, out_w = out_size
    else:
        raise TypeError(f'"out_size" should be an integer or tuple of integers, but got {out_size}')
    check_rotated_rois("riroi_align_rotated", features, rois)
    batch_size, channels, height, width = features.shape
    if num_orientations < 1 or channels % num_orientations:
        raise ValueError(
            f"riroi_align_rotated: features have {channels} channels, not a multiple of "
            f"num_orientations={num_orientations}"
        )
    rois = rois.to(features.dtype)
    y, x, weight = rotated_roi_samples(
        rois, (out_h, out_w), float(spatial_scale), int(num_samples), 0.0, clockwise, True
    )
    # Orientation interpolation uses the angle before the clockwise flip, as mmcv's kernel.
    steps = rois[:, 5].detach() * num_orientations / (2 * math.pi)
    base = torch.floor(steps)
    frac = (steps - base)[:, None, None, None]
    base = base.long() % num_orientations
    pooled = pool_rotated_rois(features, rois, y, x, weight)  # (K, ph, pw, C*O)
    pooled = pooled.unflatten(-1, (channels // num_orientations, num_orientations))
    orient = torch.arange(num_orientations, device=features.device)
    src = (orient[None, :] - base[:, None]) % num_orientations  # (K, O)
    src_next = (src + 1) % num_orientations

    def take(index: Tensor) -> Tensor:
        return pooled.gather(-1, index[:, None, None, None, :].expand_as(pooled))

    out = take(src) * (1 - frac[..., None]) + take(src_next) * frac[..., None]
    return out.flatten(-2).permute(0, 3, 1, 2).contiguous()


class RiRoIAlignRotated(nn.Module):
    """Rotation-invariant RoIAlign as a layer: :func:`riroi_align_rotated` with fixed settings.

    Args:
        out_size: ``(h, w)`` of each output map (an int for square).
        spatial_scale: Factor from RoI to feature-map coordinates.
        num_samples: Samples per bin along each axis; 0 for adaptive.
        num_orientations: Orientation channels per group.
        clockwise: Angles turn clockwise in image space.

    Raises:
        TypeError: At ``forward``, ``out_size`` is not an int or a pair of ints.
        ValueError: At ``forward``, ``features`` not 4-D, ``rois`` not ``(K, 6)`` or on another
            device, a batch index outside ``[0, N)``, or channels not a multiple of
            ``num_orientations``.
    """

    def __init__(
        self,
        out_size: int | tuple[int, int],
        spatial_scale: float,
        num_samples: int = 0,
        num_orientations: int = 8,
        clockwise: bool = False,
    ) -> None:
        super().__init__()
        self.out_size = out_size
        self.spatial_scale = float(spatial_scale)
        self.num_samples = int(num_samples)
        self.num_orientations = int(num_orientations)
        self.clockwise = clockwise

    def forward(self, features: Tensor, rois: Tensor) -> Tensor:
        """Pool ``features`` over ``rois`` ``(K, 6)``."""
        return riroi_align_rotated(
            features,
            rois,
            self.out_size,
            self.spatial_scale,
            self.num_samples,
            self.num_orientations,
            self.clockwise,
        )


RiRoIAlignRotatedFunction = op_function("RiRoIAlignRotatedFunction", riroi_align_rotated, __name__)
