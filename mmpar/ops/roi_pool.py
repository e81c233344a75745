"""RoIPool with mmcv's bins: fractional box edges, not rounded to the feature grid.

mmcv's kernel (CUDA only in 1.7.2) spans a box from ``x1 * scale`` to ``(x2 + 1) * scale``,
splits that span into equal fractional bins and max-pools the pixels from
``floor(bin start)`` to ``ceil(bin end)`` (clipped to the map). torchvision's ``roi_pool``
rounds the box to whole pixels first, which moves bins by up to a pixel, so this module
gathers each bin's pixels itself: a bin's pixels are padded to the largest bin of a block of
RoIs and max-reduced in one tensor op per block.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn.modules.utils import _pair

from ._autograd import op_function
from ._roi_checks import check_rois

__all__ = ["RoIPool", "RoIPoolFunction", "roi_pool"]

# Gathered elements per block of RoIs: bounds memory at a few hundred MB in float32.
_BLOCK_ELEMENTS = 1 << 24


def _bin_edges(start: Tensor, size: Tensor, bins: int, limit: int) -> tuple[Tensor, Tensor]:
    """Integer pixel ranges ``[lo, hi)`` of each RoI's bins along one axis, ``(K, bins)``.

    ``p * bin_size + start`` is formed in float64 and rounded once to the input's dtype, as
    the fused multiply-add of mmcv's CUDA kernel rounds it.
    """
    p = torch.arange(bins + 1, device=start.device, dtype=torch.float64)
    edges = (p * size.double()[:, None] + start.double()[:, None]).to(start.dtype)
    lo = torch.floor(edges[:, :-1]).clamp(0, limit).long()
    hi = torch.ceil(edges[:, 1:]).clamp(0, limit).long()
    return lo, hi


def _pool_block(
    feats: Tensor, batch: Tensor, ys: tuple, xs: tuple, height: int, width: int
) -> Tensor:
    """Max over each bin of a block of RoIs: ``(k, C, ph, pw)``; empty bins are 0."""
    (y_lo, y_hi), (x_lo, x_hi) = ys, xs
    span_y = int((y_hi - y_lo).max().clamp(min=1))
    span_x = int((x_hi - x_lo).max().clamp(min=1))
    ty = torch.arange(span_y, device=feats.device)
    tx = torch.arange(span_x, device=feats.device)
    rows = y_lo[:, :, None] + ty  # (k, ph, sy)
    cols = x_lo[:, :, None] + tx  # (k, pw, sx)
    row_ok = rows < y_hi[:, :, None]
    col_ok = cols < x_hi[:, :, None]
    # Out-of-bin taps read a valid pixel (clamped) and are masked out below.
    flat = (rows.clamp(max=height - 1) * width)[:, :, :, None, None] + cols.clamp(max=width - 1)[
        :, None, None
    ]
    # (k, ph, sy, pw, sx, C): channels last, so each gathered pixel is one contiguous row.
    values = feats[batch[:, None, None, None, None], flat]
    valid = row_ok[:, :, :, None, None] & col_ok[:, None, None]
    values = values.masked_fill(~valid[..., None], float("-inf"))
    k, ph, sy, pw, sx, c = values.shape
    values = values.permute(0, 5, 1, 3, 2, 4).reshape(k, c, ph, pw, sy * sx)
    # torch.max gives the first maximum in row-major order, as the kernel's strict ``>``.
    pooled = values.max(dim=-1).values
    empty = (y_hi <= y_lo)[:, :, None] | (x_hi <= x_lo)[:, None, :]
    return torch.where(empty[:, None], pooled.new_zeros(()), pooled)


def roi_pool(
    input: Tensor,  # noqa: A002 (mmcv's argument name)
    rois: Tensor,
    output_size: int | tuple[int, int],
    spatial_scale: float = 1.0,
) -> Tensor:
    """Max-pool each box's bins into a fixed-size feature map, with mmcv's bins.

    Differentiable in ``input``: the gradient of each output goes to the first pixel (in
    row-major order) holding its bin's maximum, as mmcv's argmax does.

    Args:
        input: Features ``(N, C, H, W)``.
        rois: Boxes ``(K, 5)``: batch index, then ``x1, y1, x2, y2``.
        output_size: ``(h, w)`` of each output map (an int for square).
        spatial_scale: Factor from box coordinates to feature-map coordinates.

    Returns:
        ``(K, C, h, w)`` pooled features. A bin with no pixel (outside the map), and every
        bin of a box with no extent (``x2 + 1 <= x1`` or the same in y), is 0.

    Raises:
        AssertionError: ``rois`` is not ``(K, 5)`` (as mmcv).
        IndexError: A batch index is outside ``[0, N)``.
    """
    check_rois("roi_pool", rois, input.size(0))
    ph, pw = _pair(output_size)
    n, c, height, width = input.shape
    if rois.size(0) == 0:
        return input.new_zeros(0, c, ph, pw)
    rois = rois.to(input.dtype)
    x1, y1 = rois[:, 1] * spatial_scale, rois[:, 2] * spatial_scale
    x2, y2 = (rois[:, 3] + 1) * spatial_scale, (rois[:, 4] + 1) * spatial_scale
    roi_w, roi_h = x2 - x1, y2 - y1
    ys = _bin_edges(y1, roi_h / ph, ph, height)
    xs = _bin_edges(x1, roi_w / pw, pw, width)
    # mmcv's kernel skips boxes with no extent: their output stays the zeros it started as.
    flat_box = (roi_w <= 0) | (roi_h <= 0)
    ys = (ys[0], torch.where(flat_box[:, None], ys[0], ys[1]))
    batch = rois[:, 0].long()
    feats = input.permute(0, 2, 3, 1).reshape(n, height * width, c)
    # Blocks of RoIs sorted by bin size, so the padding to a block's largest bin stays small.
    bin_area = ((ys[1] - ys[0]).amax(1) * (xs[1] - xs[0]).amax(1)).clamp(min=1)
    order = torch.argsort(bin_area)
    per_roi = c * ph * pw * bin_area[order]
    block_of = torch.div(torch.cumsum(per_roi, 0) - 1, _BLOCK_ELEMENTS, rounding_mode="floor")
    pooled = []
    for block in torch.unique_consecutive(block_of).tolist():
        idx = order[block_of == block]
        block_ys = (ys[0][idx], ys[1][idx])
        block_xs = (xs[0][idx], xs[1][idx])
        pooled.append(_pool_block(feats, batch[idx], block_ys, block_xs, height, width))
    return torch.cat(pooled)[torch.argsort(order)]


class RoIPool(nn.Module):
    """RoIPool as a layer: :func:`roi_pool` with fixed settings.

    Args:
        output_size: ``(h, w)`` of each output map (an int for square).
        spatial_scale: Factor from box coordinates to feature-map coordinates.

    Raises:
        AssertionError: At ``forward``, ``rois`` is not ``(K, 5)`` (as mmcv).
        IndexError: At ``forward``, a batch index (``rois[:, 0]``) is outside ``[0, N)``, or a box
            coordinate is NaN (that message names no RoI).
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


RoIPoolFunction = op_function("RoIPoolFunction", roi_pool, __name__)
