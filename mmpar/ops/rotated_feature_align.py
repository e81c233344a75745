"""R3Det's feature refinement, as mmcv's ``rotated_feature_align``.

Each output pixel is its input feature plus bilinear samples of the same image at the centre
(and, with ``points=5``, the four corners) of the rotated box predicted at that pixel. Batched
PyTorch on any device; differentiable in the features (not in the boxes), as mmcv's op.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._autograd import op_function
from ._bilinear import bilinear_pool

__all__ = ["RotatedFeatureAlignFunction", "rotated_feature_align"]


def rotated_feature_align(
    features: Tensor, best_rbboxes: Tensor, spatial_scale: float = 1 / 8, points: int = 1
) -> Tensor:
    """Refine features with samples at each pixel's rotated box.

    Args:
        features: ``(N, C, H, W)``.
        best_rbboxes: Boxes ``(N, H, W, 5)`` per pixel. As in mmcv's kernel, the first value
            is read as the centre's row (y) and the second as its column (x), then ``w, h,
            angle`` (radians).
        spatial_scale: Factor from box to feature-map coordinates.
        points: 1 (the centre) or 5 (centre and corners).

    Returns:
        ``(N, C, H, W)``: ``features`` plus the samples.

    Raises:
        AssertionError: ``points`` is not 1 or 5 (as mmcv).
        ValueError: ``best_rbboxes`` is not ``(N, H, W, 5)`` for ``features`` ``(N, C, H, W)``.
    """
    assert points in (1, 5), f"rotated_feature_align: points must be 1 or 5, got {points}"
    if features.dim() != 4 or best_rbboxes.shape != (*features.shape[:1], *features.shape[2:], 5):
        raise ValueError(
            "rotated_feature_align: best_rbboxes must be (N, H, W, 5) for features (N, C, H, W); "
            f"got {tuple(best_rbboxes.shape)} and {tuple(features.shape)}"
        )
    boxes = best_rbboxes.detach().to(features.dtype)
    roi_y = boxes[..., 0] * spatial_scale
    roi_x = boxes[..., 1] * spatial_scale
    ys, xs = [roi_y], [roi_x]
    if points == 5:
        half_w = boxes[..., 2] * spatial_scale / 2
        half_h = boxes[..., 3] * spatial_scale / 2
        cos, sin = torch.cos(boxes[..., 4]), torch.sin(boxes[..., 4])
        wx, wy = cos * half_w, sin * half_w
        hx, hy = -sin * half_h, cos * half_h
        for sign_w, sign_h in ((1, 1), (-1, 1), (-1, -1), (1, -1)):
            xs.append(roi_x + sign_w * wx + sign_h * hx)
            ys.append(roi_y + sign_w * wy + sign_h * hy)
    count, channels, height, width = features.shape
    y = torch.stack(ys, dim=-1).reshape(-1, points)  # (N * H * W, P)
    x = torch.stack(xs, dim=-1).reshape(-1, points)
    batch = torch.arange(count, device=features.device).repeat_interleave(height * width)
    samples = bilinear_pool(features, batch, y, x, y.new_ones(()).expand_as(y))
    return features + samples.view(count, height, width, channels).permute(0, 3, 1, 2)


RotatedFeatureAlignFunction = op_function(
    "RotatedFeatureAlignFunction", rotated_feature_align, __name__
)
