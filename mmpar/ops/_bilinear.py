"""mmcv's bilinear sampling rule for the rotated RoI / feature-align ops, batched.

A sample at ``(y, x)`` outside ``[-1, H] x [-1, W]`` is 0; inside, coordinates below 0 are
clamped to 0, and at or past the last row / column the sample takes that row / column (the
rule of mmcv's ``bilinear_interpolate`` in its CPU and CUDA kernels). Differentiable in the
features (the gradient scatters back through the same four taps), not in the coordinates,
as mmcv's kernels.
"""

from __future__ import annotations

import torch
from torch import Tensor


def bilinear_sample(features: Tensor, batch: Tensor, y: Tensor, x: Tensor) -> Tensor:
    """Sample ``features`` ``(B, C, H, W)`` at points ``(y, x)`` of images ``batch``.

    Args:
        features: Feature maps ``(B, C, H, W)``.
        batch: Image index of each point, broadcastable with ``y`` (int64).
        y: Row coordinates ``(...)``.
        x: Column coordinates, same shape as ``y``.

    Returns:
        ``(..., C)``: the samples.
    """
    height, width = features.shape[-2:]
    y = y.detach()
    x = x.detach()
    inside = (y >= -1) & (y <= height) & (x >= -1) & (x <= width)
    y = y.clamp(min=0)
    x = x.clamp(min=0)
    y_low = y.floor().clamp(max=height - 1)
    x_low = x.floor().clamp(max=width - 1)
    # At the last row / column the sample is that row / column (weight 0 on the clamped tap).
    y = torch.where(y_low >= height - 1, y_low, y)
    x = torch.where(x_low >= width - 1, x_low, x)
    ly = y - y_low
    lx = x - x_low
    y0 = y_low.long()
    x0 = x_low.long()
    y1 = (y0 + 1).clamp(max=height - 1)
    x1 = (x0 + 1).clamp(max=width - 1)
    batch = batch.expand_as(y0)
    # Channels last, so one gather per tap picks all channels of a point.
    flat = features.permute(0, 2, 3, 1)
    value = (
        flat[batch, y0, x0] * ((1 - ly) * (1 - lx))[..., None]
        + flat[batch, y0, x1] * ((1 - ly) * lx)[..., None]
        + flat[batch, y1, x0] * (ly * (1 - lx))[..., None]
        + flat[batch, y1, x1] * (ly * lx)[..., None]
    )
    return value * inside[..., None].to(value.dtype)
