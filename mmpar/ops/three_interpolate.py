"""Weighted interpolation of three neighbours' features (mmcv.ops.three_interpolate)."""

from __future__ import annotations

from torch import Tensor

from ._autograd import op_function
from ._points_common import check, check_indices, check_points

__all__ = ["ThreeInterpolate", "three_interpolate"]


def three_interpolate(features: Tensor, indices: Tensor, weight: Tensor) -> Tensor:
    """Interpolate features at new points from three neighbours each.

    ``out[b, c, n] = sum_j weight[b, n, j] * features[b, c, indices[b, n, j]]``.
    Differentiable in ``features``; as in mmcv, ``weight`` gets no gradient.

    Args:
        features: ``(B, C, M)`` features of the known points.
        indices: ``(B, N, 3)`` int indices of each new point's neighbours among the ``M``.
        weight: ``(B, N, 3)`` their weights.

    Returns:
        ``(B, C, N)`` interpolated features.

    Raises:
        TypeError: On non-floating features/weights or non-integer indices.
        AssertionError: On wrong shapes.
        IndexError: When an index is outside ``[0, M)``.
    """
    op = "three_interpolate"
    check_points(features, op, "features", 3)
    check_points(weight, op, "weight", 3, 3)
    batch, channels, m = features.shape
    check(
        isinstance(indices, Tensor)
        and tuple(indices.shape) == tuple(weight.shape)
        and weight.shape[0] == batch,
        op,
        f"indices and weight must both be (B, N, 3) with B = {batch}, got "
        f"{tuple(getattr(indices, 'shape', ()))} and {tuple(weight.shape)}",
        AssertionError,
    )
    idx = check_indices(indices, m, op, "indices")
    n = idx.shape[1]
    gathered = features.gather(2, idx.reshape(batch, 1, n * 3).expand(batch, channels, n * 3))
    gathered = gathered.reshape(batch, channels, n, 3)
    w = weight.detach().to(features.dtype).unsqueeze(1)
    # Summed in neighbour order, as the kernel accumulates.
    return (
        gathered[..., 0] * w[..., 0] + gathered[..., 1] * w[..., 1] + gathered[..., 2] * w[..., 2]
    )


ThreeInterpolate = op_function("ThreeInterpolate", three_interpolate, __name__)
