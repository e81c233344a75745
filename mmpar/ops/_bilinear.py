"""mmcv's bilinear sampling rule for the rotated RoI / feature-align ops, batched.

A sample at ``(y, x)`` outside ``[-1, H] x [-1, W]`` is 0; inside, coordinates below 0 are
clamped to 0, and at or past the last row / column the sample takes that row / column (the
rule of mmcv's ``bilinear_interpolate`` in its CPU and CUDA kernels).

Pooling many samples is one sparse-times-dense product: each output row is a weighted sum of
at most four taps per sample, so the ``(rows, B * H * W)`` weight matrix is sparse, and
multiplying it with the ``(B * H * W, C)`` features reads each feature row once per tap
without materialising the ``(rows, samples, 4, C)`` gathers. Differentiable in the features
(the gradient is the transposed product), not in the coordinates, as mmcv's kernels.
"""

from __future__ import annotations

import torch
from torch import Tensor


def bilinear_taps(
    y: Tensor, x: Tensor, height: int, width: int
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, tuple[Tensor, Tensor, Tensor, Tensor]]:
    """The four taps of mmcv's bilinear sample at each ``(y, x)``, and their weights.

    Args:
        y: Row coordinates, any shape.
        x: Column coordinates, the same shape.
        height: The map's height H.
        width: The map's width W.

    Returns:
        ``(inside, y0, x0, y1, x1, (w1, w2, w3, w4))``: whether the sample is inside
        ``[-1, H] x [-1, W]`` (outside, mmcv's sample is 0), the low and high row / column
        (int64, clamped into the map), and the weights of taps ``(y0, x0)``, ``(y0, x1)``,
        ``(y1, x0)``, ``(y1, x1)``, computed as mmcv's kernels compute them.
    """
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
    hy = 1 - ly
    hx = 1 - lx
    y0 = y_low.long()
    x0 = x_low.long()
    y1 = (y0 + 1).clamp(max=height - 1)
    x1 = (x0 + 1).clamp(max=width - 1)
    return inside, y0, x0, y1, x1, (hy * hx, hy * lx, ly * hx, ly * lx)


def bilinear_pool(features: Tensor, batch: Tensor, y: Tensor, x: Tensor, weight: Tensor) -> Tensor:
    """Weighted sums of bilinear samples: ``out[r] = sum_s weight[r, s] * f(batch[r], y, x)``.

    Args:
        features: Feature maps ``(B, C, H, W)``.
        batch: Image index of each row ``(R,)`` (int64).
        y: Row coordinates of the samples ``(R, S)``.
        x: Column coordinates ``(R, S)``.
        weight: Each sample's weight ``(R, S)``, broadcastable.

    Returns:
        ``(R, C)``.
    """
    batch_size, channels, height, width = features.shape
    rows, samples = y.shape
    inside, y0, x0, y1, x1, taps = bilinear_taps(y.detach(), x.detach(), height, width)
    base = (batch * (height * width))[:, None]
    columns = torch.stack(
        [
            base + y0 * width + x0,
            base + y0 * width + x1,
            base + y1 * width + x0,
            base + y1 * width + x1,
        ],
        dim=-1,
    )
    scale = (weight.detach().to(taps[0].dtype) * inside.to(taps[0].dtype)).expand(rows, samples)[
        ..., None
    ]
    values = torch.stack(taps, dim=-1) * scale
    row_index = torch.arange(rows, device=y0.device)[:, None, None].expand_as(columns)
    matrix = torch.sparse_coo_tensor(
        torch.stack([row_index.reshape(-1), columns.reshape(-1)]),
        values.reshape(-1).to(features.dtype),
        (rows, batch_size * height * width),
        check_invariants=False,  # indices are in range by construction
    )
    flat = features.permute(0, 2, 3, 1).reshape(batch_size * height * width, channels)
    return torch.sparse.mm(matrix, flat)
