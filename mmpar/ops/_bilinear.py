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


def bilinear_corners(
    height: int, width: int, y: Tensor, x: Tensor
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    """The four taps of mmcv's bilinear rule at ``(y, x)`` (any shape, detached).

    Args:
        height: Rows of the feature map.
        width: Columns of the feature map.
        y: Row coordinates.
        x: Column coordinates.

    Returns:
        ``(y_low, x_low, y_high, x_high, ly, lx, inside)``: the taps' rows and columns
        (int64, in range), the fractions of the clamped coordinates past the low tap, and
        whether the sample lies within a pixel of the map (outside, mmcv's value is 0).
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
    y0 = y_low.long()
    x0 = x_low.long()
    y1 = (y0 + 1).clamp(max=height - 1)
    x1 = (x0 + 1).clamp(max=width - 1)
    return y0, x0, y1, x1, ly, lx, inside


def bilinear_weights(ly: Tensor, lx: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The weights of the four taps of :func:`bilinear_corners`, in its column order.

    Args:
        ly: Fraction of the row past the low tap.
        lx: Fraction of the column past the low tap.

    Returns:
        The weights of (low row, low column), (low, high), (high, low), (high, high), as
        mmcv's kernels compute them.
    """
    hy = 1 - ly
    hx = 1 - lx
    return hy * hx, hy * lx, ly * hx, ly * lx


def sparse_rows(columns: Tensor, values: Tensor, num_columns: int) -> Tensor:
    """A sparse ``(R, num_columns)`` matrix: row ``r`` holds ``values[r]`` at ``columns[r]``.

    Args:
        columns: Column of each entry, ``(R, T)`` int64, in range (repeats add up).
        values: Each entry's value, ``(R, T)``.
        num_columns: Columns of the matrix.

    Returns:
        The matrix as an (uncoalesced) sparse COO tensor.
    """
    rows, taps = columns.shape
    row_index = torch.arange(rows, device=columns.device)[:, None].expand(rows, taps)
    return torch.sparse_coo_tensor(
        torch.stack([row_index.reshape(-1), columns.reshape(-1)]),
        values.reshape(-1),
        (rows, num_columns),
        check_invariants=False,  # indices are in range by construction
    )


def rows_times_pixels(matrix: Tensor, features: Tensor) -> Tensor:
    """``matrix @ pixels``: the ``(R, B*H*W)`` sparse matrix times the ``(B*H*W, C)`` pixels.

    Args:
        matrix: Sparse weights over the flattened pixels of ``features``.
        features: Feature maps ``(B, C, H, W)``.

    Returns:
        ``(R, C)``, differentiable in ``features`` (the transposed product).
    """
    batch_size, channels, height, width = features.shape
    flat = features.permute(0, 2, 3, 1).reshape(batch_size * height * width, channels)
    return torch.sparse.mm(matrix.to(features.dtype), flat)


def bilinear_columns(batch: Tensor, height: int, width: int, corners: tuple[Tensor, ...]) -> Tensor:
    """Flattened-pixel columns ``(..., 4)`` of the taps of :func:`bilinear_corners`.

    The order is (low row, low column), (low, high), (high, low), (high, high).
    """
    y0, x0, y1, x1 = corners[:4]
    base = batch * (height * width)
    return torch.stack(
        [
            base + y0 * width + x0,
            base + y0 * width + x1,
            base + y1 * width + x0,
            base + y1 * width + x1,
        ],
        dim=-1,
    )


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
    batch_size, _, height, width = features.shape
    rows, samples = y.shape
    corners = bilinear_corners(height, width, y.detach(), x.detach())
    ly, lx, inside = corners[4:]
    columns = bilinear_columns(batch[:, None], height, width, corners)
    scale = (weight.detach().to(ly.dtype) * inside.to(ly.dtype)).expand(rows, samples)[..., None]
    values = torch.stack(bilinear_weights(ly, lx), dim=-1) * scale
    matrix = sparse_rows(
        columns.reshape(rows, samples * 4),
        values.reshape(rows, samples * 4).to(features.dtype),
        batch_size * height * width,
    )
    return rows_times_pixels(matrix, features)


def bin_sample_points(
    start_y: Tensor,
    start_x: Tensor,
    roi_h: Tensor,
    roi_w: Tensor,
    output_size: tuple[int, int],
    sampling_ratio: int,
) -> tuple[Tensor, Tensor, Tensor]:
    """The sample points of every bin of every RoI, in the float operations of mmcv's kernels.

    Bin ``(ph, pw)`` of a RoI holds a ``grid_h x grid_w`` grid of samples (``sampling_ratio``
    per axis, or ``ceil(bin size)`` per RoI when it is 0) at the centres of equal cells:
    ``start + p * bin + (i + 0.5) * bin / grid``, summed left to right as the kernels do. RoIs
    with smaller grids are padded to the largest one with samples of weight 0.

    Args:
        start_y: Where the bins start along y: ``(K,)``, or ``(K, ph, pw)`` per bin.
        start_x: The same along x.
        roi_h: The RoIs' heights ``(K,)`` (bins and grids follow from them).
        roi_w: The RoIs' widths ``(K,)``.
        output_size: ``(ph, pw)``, the bins per RoI.
        sampling_ratio: Samples per bin and axis; 0 for ``ceil(bin size)`` per RoI.

    Returns:
        ``(y, x, weight)`` shaped to broadcast to ``(K, ph, pw, gh, gw)`` (``gh, gw`` the largest
        grid): y varies along ``ph`` and ``gh`` (and ``pw`` with a per-bin start), x likewise;
        weight is ``1 / (grid_h * grid_w)`` on the RoI's own grid and 0 on the padding (a RoI
        with an empty grid, e.g. of negative size, has only padding).
    """
    pooled_h, pooled_w = output_size
    bin_h = roi_h / pooled_h
    bin_w = roi_w / pooled_w
    if sampling_ratio > 0:
        grid_h = torch.full_like(roi_h, sampling_ratio)
        grid_w = torch.full_like(roi_w, sampling_ratio)
    else:
        grid_h = torch.ceil(roi_h / pooled_h)
        grid_w = torch.ceil(roi_w / pooled_w)
    count = roi_h.size(0)
    max_h = max(int(grid_h.max()), 1) if count else 1
    max_w = max(int(grid_w.max()), 1) if count else 1
    dtype, device = roi_h.dtype, roi_h.device
    ph = torch.arange(pooled_h, dtype=dtype, device=device)[None, :, None, None, None]
    pw = torch.arange(pooled_w, dtype=dtype, device=device)[None, None, :, None, None]
    iy = torch.arange(max_h, dtype=dtype, device=device)[None, None, None, :, None]
    ix = torch.arange(max_w, dtype=dtype, device=device)[None, None, None, None, :]

    def per_roi(value: Tensor) -> Tensor:
        return value.reshape(*value.shape, *([1] * (5 - value.dim())))

    gh, gw = per_roi(grid_h), per_roi(grid_w)
    # (clamped divisors: a RoI with an empty grid has only unused, finite samples)
    y = per_roi(start_y) + ph * per_roi(bin_h) + (iy + 0.5) * per_roi(bin_h) / gh.clamp(min=1)
    x = per_roi(start_x) + pw * per_roi(bin_w) + (ix + 0.5) * per_roi(bin_w) / gw.clamp(min=1)
    weight = ((iy < gh) & (ix < gw)).to(dtype) / per_roi((grid_h * grid_w).clamp(min=1))
    return y, x, weight
