"""RoIAlign's ``pool_mode='max'``: the largest bilinear sample of each bin, as mmcv's CPU kernel.

torchvision only averages. mmcv samples each bin on a ``grid_h x grid_w`` grid (the sampling
ratio, or ``ceil(bin size)`` per RoI), interpolates each sample bilinearly (a sample more than
a pixel outside the map is 0, one within a pixel of it is clamped to the edge) and keeps the
largest, starting from -10000 (a bin with no sample, or only samples below that, is -10000).
Here the samples of a block of RoIs are gathered into one padded tensor and max-reduced
(channels last, so each gather copies whole channel rows);
autograd sends each output's gradient to the four pixels of its winning sample with the
bilinear weights, which is mmcv's backward.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["roi_align_max"]

# mmcv's starting value of the running maximum: bins whose samples are all below it give it.
_FLOOR = -10000.0
# Gathered elements per block of RoIs (times four corners): bounds memory.
_BLOCK_ELEMENTS = 1 << 22


def _axis(
    start: Tensor, bin_size: Tensor, grid: Tensor, bins: int, limit: int
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """One axis of the sampling grid, ``(K, bins, G)``: low and high pixel, their weights, use.

    The float operations (and their order) are those of mmcv's kernel, so that samples land
    on the same coordinates bit for bit.
    """
    g_max = max(int(grid.max()), 1)
    dtype = start.dtype
    p = torch.arange(bins, device=start.device, dtype=dtype)[None, :, None]
    i = torch.arange(g_max, device=start.device, dtype=dtype)[None, None, :]
    grid_f = grid.to(dtype)[:, None, None]
    coord = (start[:, None, None] + p * bin_size[:, None, None]) + (
        (i + 0.5) * bin_size[:, None, None]
    ) / grid_f
    used = i < grid_f  # samples beyond this RoI's own grid are padding
    outside = (coord < -1.0) | (coord > limit)
    coord = coord.clamp(min=0)
    low = coord.long()
    at_edge = low >= limit - 1
    low = torch.where(at_edge, limit - 1, low)
    high = torch.where(at_edge, low, low + 1)
    coord = torch.where(at_edge, low.to(dtype), coord)
    frac = coord - low.to(dtype)
    w_low, w_high = 1.0 - frac, frac
    # A sample more than a pixel outside is 0: zero weights on pixel 0, as mmcv's pre-calc.
    w_low = w_low.masked_fill(outside, 0)
    w_high = w_high.masked_fill(outside, 0)
    low = low.masked_fill(outside, 0)
    high = high.masked_fill(outside, 0)
    return low, high, w_low, w_high, used


def _max_block(feats: Tensor, batch: Tensor, ys: tuple, xs: tuple, width: int) -> Tensor:
    """Max-pooled bilinear samples of a block of RoIs, ``(k, C, ph, pw)``."""
    y_lo, y_hi, wy_lo, wy_hi, y_used = (t[:, :, :, None, None] for t in ys)
    x_lo, x_hi, wx_lo, wx_hi, x_used = (t[:, None, None] for t in xs)
    b = batch[:, None, None, None, None]

    def corner(y: Tensor, x: Tensor) -> Tensor:
        return feats[b, y * width + x]  # (k, ph, gh, pw, gw, C)

    # w1*v1 + w2*v2 + w3*v3 + w4*v4, left to right, as mmcv sums them; in place (no add's
    # backward needs its output), as the block is the largest tensor of the op.
    value = (wy_lo * wx_lo)[..., None] * corner(y_lo, x_lo)
    value += (wy_lo * wx_hi)[..., None] * corner(y_lo, x_hi)
    value += (wy_hi * wx_lo)[..., None] * corner(y_hi, x_lo)
    value += (wy_hi * wx_hi)[..., None] * corner(y_hi, x_hi)
    used = y_used & x_used
    if not bool(used.all()):  # padding only where the RoIs' grids differ (sampling_ratio 0)
        value.masked_fill_(~used[..., None], float("-inf"))
    # The first maximum in row-major sample order, as the kernel's strict ``>``: the first
    # along each sample row, then the first row holding the largest, with no transposed copy.
    best = value.max(dim=4).values.max(dim=2).values  # (k, ph, pw, C)
    best = torch.where(best > _FLOOR, best, best.new_full((), _FLOOR))
    return best.permute(0, 3, 1, 2)


def roi_align_max(
    input: Tensor,  # noqa: A002 (mmcv's argument name)
    rois: Tensor,
    output_size: tuple[int, int],
    spatial_scale: float,
    sampling_ratio: int,
    aligned: bool,
) -> Tensor:
    """Max-mode RoIAlign; arguments as :func:`mmpar.ops.roi_align` (``rois`` checked there)."""
    ph, pw = output_size
    n, c, height, width = input.shape
    if rois.size(0) == 0:
        return input.new_zeros(0, c, ph, pw)
    rois = rois.to(input.dtype)
    shift = 0.5 if aligned else 0.0
    x1 = rois[:, 1] * spatial_scale - shift
    y1 = rois[:, 2] * spatial_scale - shift
    roi_w = (rois[:, 3] * spatial_scale - shift) - x1
    roi_h = (rois[:, 4] * spatial_scale - shift) - y1
    if not aligned:  # (aligned boxes of negative size are refused by roi_align)
        roi_w, roi_h = roi_w.clamp(min=1), roi_h.clamp(min=1)
    bin_h, bin_w = roi_h / ph, roi_w / pw
    if sampling_ratio > 0:
        grid_h = torch.full_like(bin_h, sampling_ratio, dtype=torch.long)
        grid_w = grid_h
    else:
        grid_h, grid_w = torch.ceil(bin_h).long(), torch.ceil(bin_w).long()
    feats = input.permute(0, 2, 3, 1).reshape(n, height * width, c)
    batch = rois[:, 0].long()
    per_roi = max(c * ph * pw, 1) * (grid_h * grid_w).clamp(min=1)
    order = torch.argsort(per_roi)
    block_of = torch.div(
        torch.cumsum(per_roi[order], 0) - 1, _BLOCK_ELEMENTS, rounding_mode="floor"
    )
    pooled = []
    for block in torch.unique_consecutive(block_of).tolist():
        idx = order[block_of == block]
        ys = _axis(y1[idx], bin_h[idx], grid_h[idx], ph, height)
        xs = _axis(x1[idx], bin_w[idx], grid_w[idx], pw, width)
        pooled.append(_max_block(feats, batch[idx], ys, xs, width))
    return torch.cat(pooled)[torch.argsort(order)]
