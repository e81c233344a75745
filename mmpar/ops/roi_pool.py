"""RoIPool with mmcv's signature and box convention, on torchvision's kernel.

mmcv's kernel spans a box from ``x1 * scale`` to ``(x2 + 1) * scale`` (the ``+ 1`` in image
pixels); torchvision's from ``round(x1 * scale)`` to ``round(x2 * scale) + 1`` (in feature
pixels). The boxes are converted to mmcv's span before torchvision's kernel sees them, so the
bins are mmcv's wherever those corners fall on the feature grid; elsewhere torchvision rounds
them to it, where mmcv's kernel used fractional bin edges.
"""

from __future__ import annotations

import torch
import torchvision
from torch import Tensor, nn
from torch.nn.modules.utils import _pair

__all__ = ["RoIPool", "roi_pool"]


def roi_pool(
    input: Tensor,  # noqa: A002 (mmcv's argument name)
    rois: Tensor,
    output_size: int | tuple[int, int],
    spatial_scale: float = 1.0,
) -> Tensor:
    """Max-pool each box's bins into a fixed-size feature map.

    Args:
        input: Features ``(N, C, H, W)``.
        rois: Boxes ``(K, 5)``: batch index, then ``x1, y1, x2, y2``.
        output_size: ``(h, w)`` of each output map (an int for square).
        spatial_scale: Factor from box coordinates to feature-map coordinates.

    Returns:
        ``(K, C, h, w)`` pooled features.
    """
    assert rois.size(1) == 5, "RoI must be (idx, x1, y1, x2, y2)"
    return torchvision.ops.roi_pool(input, _mmcv_span(rois, spatial_scale), _pair(output_size))


def _mmcv_span(rois: Tensor, spatial_scale: float) -> Tensor:
    # In feature pixels, with torchvision's inclusive far corner: x2' + 1 == (x2 + 1) * scale.
    return torch.cat(
        [rois[:, :1], rois[:, 1:3] * spatial_scale, (rois[:, 3:5] + 1) * spatial_scale - 1], 1
    )


class RoIPool(nn.Module):
    """RoIPool as a layer: :func:`roi_pool` with fixed settings.

    Args:
        output_size: ``(h, w)`` of each output map (an int for square).
        spatial_scale: Factor from box coordinates to feature-map coordinates.
    """

    def __init__(self, output_size: int | tuple[int, int], spatial_scale: float = 1.0) -> None:
        super().__init__()
        self.output_size = _pair(output_size)
        self.spatial_scale = float(spatial_scale)

    def forward(self, input: Tensor, rois: Tensor) -> Tensor:  # noqa: A002
        """Max-pool ``rois`` from ``input``; shapes as :meth:`mmpar.ops.RoIAlign.forward`."""
        return roi_pool(input, rois, self.output_size, self.spatial_scale)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(output_size={self.output_size}, "
            f"spatial_scale={self.spatial_scale})"
        )
