"""RoIPool with mmcv's signature, on torchvision's kernel.

Box corners are rounded to the feature grid (torchvision's, and Fast R-CNN's, convention);
mmcv's CUDA kernel used the unrounded corners, so bins can differ by a pixel when
``box * spatial_scale`` is fractional. Results are identical for integral corners.
"""

from __future__ import annotations

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
    return torchvision.ops.roi_pool(input, rois, _pair(output_size), float(spatial_scale))


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
        """Pool ``rois`` (``(K, 5)``) from ``input`` (NCHW).

        Args:
            input: Features ``(N, C, H, W)``.
            rois: Boxes ``(K, 5)``.

        Returns:
            ``(K, C, h, w)`` pooled features.
        """
        return torchvision.ops.roi_pool(input, rois, self.output_size, self.spatial_scale)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(output_size={self.output_size}, "
            f"spatial_scale={self.spatial_scale})"
        )
