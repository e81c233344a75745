"""Gather point features by index (mmcv.ops.gather_points), differentiable, on any device."""

from __future__ import annotations

from torch import Tensor

from ._autograd import op_function
from ._points_common import check, check_indices, check_points

__all__ = ["GatherPoints", "gather_points"]


def gather_points(features: Tensor, indices: Tensor) -> Tensor:
    """Pick the features of the indexed points: ``out[b, c, m] = features[b, c, indices[b, m]]``.

    Differentiable in ``features`` (the gradient of a point picked twice is summed).

    Args:
        features: ``(B, C, N)`` features.
        indices: ``(B, M)`` int indices into the ``N`` points.

    Returns:
        ``(B, C, M)`` gathered features.

    Raises:
        TypeError: On non-floating features or non-integer indices.
        AssertionError: On wrong shapes.
        IndexError: When an index is outside ``[0, N)``.
    """
    op = "gather_points"
    check_points(features, op, "features", 3)
    batch, channels, n = features.shape
    check(
        isinstance(indices, Tensor) and indices.dim() == 2 and indices.shape[0] == batch,
        op,
        f"indices must be (B, M) with B = {batch}, got {tuple(getattr(indices, 'shape', ()))}",
        AssertionError,
    )
    idx = check_indices(indices, n, op, "indices")
    return features.gather(2, idx.unsqueeze(1).expand(batch, channels, idx.shape[1]))


GatherPoints = op_function("GatherPoints", gather_points, __name__)
