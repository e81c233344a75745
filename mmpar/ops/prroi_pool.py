"""mmcv 1.x's ``mmcv.ops.prroi_pool``: Precise RoI Pooling, the exact mean of each bin.

The features are read as their bilinear interpolant, zero beyond the map (PrRoIPool's
definition); a bin's output is its exact integral over the bin divided by the bin's area.
That integral needs no loop over the pixels a bin covers: with ``G(y, x)`` the integral of
the interpolant over ``(-inf, y] x (-inf, x]``, a bin's integral is four values of ``G`` at
its corners, and ``G`` at any point is nine entries of the 2-D prefix sum of the map (the
rows and columns before the point in full, the two around it by the integral of the hat
function). So each bin is 36 weighted prefix-sum entries, one sparse product for all bins
(:mod:`mmpar.ops._bilinear`'s), whatever the RoIs' size. The prefix sums are kept in float64
so that differences of large sums stay exact to float32.

Gradients are mmcv's (from its CUDA kernels: mmcv-full 1.7.2 has no CPU kernel): the features
get the adjoint; the RoIs get the derivative of the bin mean in each bin edge (the edge's line
integral minus the mean times its length, over the area), chained to the RoI corners.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.autograd.function import once_differentiable
from torch.nn.modules.utils import _pair

from mmpar.utils import TORCH_VERSION

from ._bilinear import rows_times_pixels, sparse_rows
from ._roi_checks import check_finite_boxes, check_rois

__all__ = ["TORCH_VERSION", "PrRoIPool", "PrRoIPoolFunction", "prroi_pool"]

# Where the integral tables are summed: float64, so a bin's four-corner difference of
# map-sized sums keeps float32 precision.
_ACCUMULATE = torch.float64


def _axis_weights(coord: Tensor, derivative: bool) -> tuple[Tensor, Tensor]:
    """Prefix-sum indices ``(..., 3)`` and weights ``(..., 3)`` of ``G`` along one axis.

    With ``k = floor(coord)``, ``t = coord - k``: ``G`` takes prefix sum ``k - 1`` with weight
    ``(1 - t)**2 / 2``, ``k`` with ``1/2 + t - t**2`` and ``k + 1`` with ``t**2 / 2`` (the hat
    function's integral); ``derivative`` gives the weights' derivatives in ``coord``.
    """
    low = torch.floor(coord)
    t = coord - low
    if derivative:
        weights = torch.stack([t - 1, 1 - 2 * t, t], dim=-1)
    else:
        weights = torch.stack([(1 - t) ** 2 / 2, 0.5 + t - t * t, t * t / 2], dim=-1)
    index = low.long()[..., None] + torch.arange(-1, 2, device=coord.device)
    return index, weights


def _corner_entries(
    y: Tensor, x: Tensor, sign: float, size: tuple[int, int], base: Tensor, dy: bool, dx: bool
) -> tuple[Tensor, Tensor]:
    """Columns and values ``(R, 9)`` of ``sign * G(y, x)`` (or its ``y`` / ``x`` derivative)."""
    height, width = size
    rows, wy = _axis_weights(y, dy)
    cols, wx = _axis_weights(x, dx)
    # Prefix sums before row / column 0 are 0; past the last one they are the full sum.
    wy = wy * (rows >= 0)
    wx = wx * (cols >= 0)
    rows = rows.clamp(0, height - 1)
    cols = cols.clamp(0, width - 1)
    columns = base[:, None, None] + rows[:, :, None] * width + cols[:, None, :]
    values = sign * wy[:, :, None] * wx[:, None, :]
    return columns.reshape(-1, 9), values.reshape(-1, 9)


def _matrix(
    corners: list[tuple[Tensor, Tensor, float]],
    size: tuple[int, int],
    base: Tensor,
    batch_pixels: int,
    dy: bool = False,
    dx: bool = False,
) -> Tensor:
    """The sparse sum over ``corners`` (``(y, x, sign)``) of ``sign * G`` (or a derivative)."""
    entries = [_corner_entries(y, x, sign, size, base, dy, dx) for y, x, sign in corners]
    columns = torch.cat([c for c, _ in entries], dim=1)
    values = torch.cat([v for _, v in entries], dim=1)
    return sparse_rows(columns, values, batch_pixels)


def _bins(
    rois: Tensor, output_size: tuple[int, int], spatial_scale: float
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """Bin edges ``(K * ph * pw,)`` each (y1, x1, y2, x2) and area, in mmcv's float steps."""
    pooled_h, pooled_w = output_size
    x1 = rois[:, 1] * spatial_scale
    y1 = rois[:, 2] * spatial_scale
    roi_w = (rois[:, 3] * spatial_scale - x1).clamp(min=0)
    roi_h = (rois[:, 4] * spatial_scale - y1).clamp(min=0)
    bin_h = (roi_h / pooled_h)[:, None, None]
    bin_w = (roi_w / pooled_w)[:, None, None]
    ph = torch.arange(pooled_h, dtype=rois.dtype, device=rois.device)[None, :, None]
    pw = torch.arange(pooled_w, dtype=rois.dtype, device=rois.device)[None, None, :]
    shape = (rois.size(0), pooled_h, pooled_w)
    bin_y1 = (y1[:, None, None] + bin_h * ph).expand(shape)
    bin_x1 = (x1[:, None, None] + bin_w * pw).expand(shape)
    bin_y2 = bin_y1 + bin_h
    bin_x2 = bin_x1 + bin_w
    area = (bin_w * bin_h).clamp(min=0).expand(shape)
    return tuple(t.reshape(-1) for t in (bin_y1, bin_x1, bin_y2, bin_x2, area))  # type: ignore[return-value]


def _prefix_sums(features: Tensor) -> Tensor:
    """2-D prefix sums over rows and columns, ``(B, C, H, W)`` stored channels-last.

    Channels-last storage makes the ``(B*H*W, C)`` view of the sparse products a free reshape.
    """
    table = features.to(_ACCUMULATE).permute(0, 2, 3, 1).cumsum(1).cumsum(2)
    return table.permute(0, 3, 1, 2)


class PrRoIPoolFunction(torch.autograd.Function):
    """Precise RoI pooling with mmcv's argument order (``prroi_pool`` is its apply).

    Raises:
        ValueError: ``features`` or ``rois`` is not floating point, or a box is NaN or infinite.
        AssertionError: ``rois`` is not ``(K, 5)`` (as mmcv).
        IndexError: A batch index (``rois[:, 0]``) is outside ``[0, N)``.
    """

    @staticmethod
    def forward(  # type: ignore[override]
        ctx,
        features: Tensor,
        rois: Tensor,
        output_size: tuple,
        spatial_scale: float = 1.0,
    ) -> Tensor:
        """Mean of each bin of each RoI, ``(K, C, ph, pw)``; see :class:`PrRoIPool`."""
        if not (features.is_floating_point() and rois.is_floating_point()):
            raise ValueError(
                f"prroi_pool: features and rois must be floating point, got {features.dtype} "
                f"and {rois.dtype}"
            )
        check_rois("prroi_pool", rois, features.size(0))
        check_finite_boxes("prroi_pool", rois)
        size = (int(output_size[0]), int(output_size[1]))
        batch_size, channels, height, width = features.shape
        edges = _bins(rois.detach().to(features.dtype), size, float(spatial_scale))
        bins = size[0] * size[1]
        base = (rois[:, 0].long() * (height * width)).repeat_interleave(bins)
        y1, x1, y2, x2, area = (e.to(_ACCUMULATE) for e in edges)
        ctx.geometry = (size, float(spatial_scale), base, y1, x1, y2, x2, area, rois.dtype)
        pool = _matrix(
            [(y2, x2, 1.0), (y1, x2, -1.0), (y2, x1, -1.0), (y1, x1, 1.0)],
            (height, width),
            base,
            batch_size * height * width,
        )
        integral = rows_times_pixels(pool, _prefix_sums(features))
        mean = torch.where(area[:, None] > 0, integral / area.clamp(min=1e-300)[:, None], 0)
        output = mean.to(features.dtype).view(rois.size(0), *size, channels)
        output = output.permute(0, 3, 1, 2).contiguous()
        ctx.pool = pool
        ctx.save_for_backward(features, output)
        return output

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output: Tensor) -> tuple:  # type: ignore[override]
        """Gradients of the features (the adjoint) and of the RoIs (mmcv's bin-edge rule)."""
        features, output = ctx.saved_tensors
        size, scale, base, y1, x1, y2, x2, area, rois_dtype = ctx.geometry
        batch_size, channels, height, width = features.shape
        grad_rows = grad_output.permute(0, 2, 3, 1).reshape(-1, channels).to(_ACCUMULATE)
        # mmcv skips a bin whose area is 0 (its output is 0 and carries no gradient).
        per_area = torch.where(area > 0, 1 / area.clamp(min=1e-300), 0)[:, None]
        grad_features = grad_rois = None
        if ctx.needs_input_grad[0]:
            flat = torch.sparse.mm(ctx.pool.t(), grad_rows * per_area)
            table = flat.view(batch_size, height, width, channels).permute(0, 3, 1, 2)
            # The adjoint of the prefix sums: sums from each pixel to the far corner.
            suffix = table.flip(2, 3).cumsum(2).cumsum(3).flip(2, 3)
            grad_features = suffix.to(features.dtype).contiguous()
        if ctx.needs_input_grad[1]:
            grad_rois = _rois_gradient(
                features, output, grad_rows, per_area, (y1, x1, y2, x2), base, size, scale
            ).to(rois_dtype)
        return grad_features, grad_rois, None, None


def _rois_gradient(
    features: Tensor,
    output: Tensor,
    grad_rows: Tensor,
    per_area: Tensor,
    edges: tuple[Tensor, Tensor, Tensor, Tensor],
    base: Tensor,
    size: tuple[int, int],
    scale: float,
) -> Tensor:
    """``(K, 5)``: each bin mean's derivative in its four edges, chained to the RoI corners."""
    y1, x1, y2, x2 = edges
    batch_size, channels, height, width = features.shape
    pixels = batch_size * height * width
    table = _prefix_sums(features)

    def line(corners: list[tuple[Tensor, Tensor, float]], dy: bool) -> Tensor:
        matrix = _matrix(corners, (height, width), base, pixels, dy=dy, dx=not dy)
        return rows_times_pixels(matrix, table)  # (rows, C)

    weight = grad_rows * (per_area * scale)

    def weighted(value: Tensor) -> Tensor:
        """Each row's dot product with the output gradient: ``(rows,)``, no product temporary."""
        return torch.bmm(value[:, None, :], weight[:, :, None]).view(-1)

    # Integrals of the interpolant along each bin edge (mmcv's grad_x1_y, ... grad_x_y2),
    # each reduced over channels as soon as it is made.
    left = weighted(line([(y2, x1, 1.0), (y1, x1, -1.0)], dy=False))
    right = weighted(line([(y2, x2, 1.0), (y1, x2, -1.0)], dy=False))
    top = weighted(line([(y1, x2, 1.0), (y1, x1, -1.0)], dy=True))
    bottom = weighted(line([(y2, x2, 1.0), (y2, x1, -1.0)], dy=True))
    mean = weighted(output.permute(0, 2, 3, 1).reshape(-1, channels).to(_ACCUMULATE))
    d_x1 = (y2 - y1) * mean - left
    d_x2 = right - (y2 - y1) * mean
    d_y1 = (x2 - x1) * mean - top
    d_y2 = bottom - (x2 - x1) * mean
    pooled_h, pooled_w = size
    count = output.size(0)
    dtype, device = d_x1.dtype, d_x1.device
    # A bin's edges move with the RoI's corners by these fractions (mmcv's chain rule).
    pw = torch.arange(pooled_w, dtype=dtype, device=device)[None, None, :]
    ph = torch.arange(pooled_h, dtype=dtype, device=device)[None, :, None]
    shape = (count, pooled_h, pooled_w)
    d_x1, d_x2, d_y1, d_y2 = (d.view(shape) for d in (d_x1, d_x2, d_y1, d_y2))
    grad = torch.zeros(count, 5, dtype=dtype, device=device)
    grad[:, 1] = (d_x1 * (1 - pw / pooled_w) + d_x2 * (1 - (pw + 1) / pooled_w)).sum((1, 2))
    grad[:, 2] = (d_y1 * (1 - ph / pooled_h) + d_y2 * (1 - (ph + 1) / pooled_h)).sum((1, 2))
    grad[:, 3] = (d_x2 * (pw + 1) / pooled_w + d_x1 * pw / pooled_w).sum((1, 2))
    grad[:, 4] = (d_y2 * (ph + 1) / pooled_h + d_y1 * ph / pooled_h).sum((1, 2))
    return grad


prroi_pool = PrRoIPoolFunction.apply


class PrRoIPool(nn.Module):
    """Precise RoI pooling (Jiang et al., 2018): the exact mean of each bin.

    Unlike RoIPool (a max over quantised bins) and RoIAlign (a mean of sampled points), each
    output is the integral of the features' bilinear interpolant over the bin divided by its
    area, so the gradient in the box coordinates is continuous.

    Args:
        output_size: ``(h, w)`` of each output map (an int for square).
        spatial_scale: Factor from RoI to feature-map coordinates (1 / stride).

    Raises:
        ValueError: At ``forward``, ``features`` or ``rois`` is not floating point, or a box is
            NaN or infinite.
        AssertionError: At ``forward``, ``rois`` is not ``(K, 5)`` (as mmcv).
        IndexError: At ``forward``, a batch index is outside ``[0, N)``.
    """

    def __init__(self, output_size: int | tuple, spatial_scale: float = 1.0) -> None:
        super().__init__()
        self.output_size = _pair(output_size)
        self.spatial_scale = float(spatial_scale)

    def forward(self, features: Tensor, rois: Tensor) -> Tensor:
        """Pool each RoI of ``features``.

        Args:
            features: Feature maps ``(N, C, H, W)``.
            rois: ``(K, 5)``: batch index, then ``x1, y1, x2, y2`` in input-image pixels.

        Returns:
            ``(K, C, h, w)``, differentiable in ``features`` and ``rois``.
        """
        return prroi_pool(features, rois, self.output_size, self.spatial_scale)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(output_size={self.output_size}, "
            f"spatial_scale={self.spatial_scale})"
        )
