"""PAConv's score-weighted aggregation (mmcv.ops.assign_score_withk), on any device."""

from __future__ import annotations

import torch
from torch import Tensor

from ._autograd import op_function
from ._points_common import check, check_points

__all__ = ["AssignScoreWithK", "assign_score_withk"]


def assign_score_withk(
    scores: Tensor,
    point_features: Tensor,
    center_features: Tensor,
    knn_idx: Tensor,
    aggregate: str = "sum",
) -> Tensor:
    """Weight each neighbour's features by its scores over the weight bank, and sum.

    ``out[b, o, n, k] = sum_m scores[b, n, k, m] * (point_features[b, kn, m, o] -
    center_features[b, cn, m, o])`` with ``kn = knn_idx[b, n, k]`` and ``cn = knn_idx[b, n,
    0]`` (the first neighbour is the centre). A neighbour index outside ``[0, N)`` marks "no
    neighbour": its output is 0 and it gets no gradient, as in mmcv's kernel.
    Differentiable in ``scores``, ``point_features`` and ``center_features``.

    Args:
        scores: ``(B, npoint, K, M)`` scores of the ``M`` weight matrices.
        point_features: ``(B, N, M, out_dim)`` transformed point features.
        center_features: ``(B, N, M, out_dim)`` transformed centre features.
        knn_idx: ``(B, npoint, K)`` int64 neighbour indices.
        aggregate: ``'sum'``, ``'avg'`` or ``'max'``: accepted for mmcv's signature; mmcv's
            kernel always sums, and so does this.

    Returns:
        ``(B, out_dim, npoint, K)`` aggregated features.

    Raises:
        TypeError: On non-floating features/scores or a non-integer ``knn_idx``.
        AssertionError: On inconsistent shapes.
        KeyError: For an ``aggregate`` other than the three names (as mmcv).
        IndexError: When a centre index ``knn_idx[..., 0]`` is outside ``[0, N)``.
    """
    op = "assign_score_withk"
    if aggregate not in ("sum", "avg", "max"):
        raise KeyError(
            f"mmpar.ops.{op}: aggregate must be 'sum', 'avg' or 'max', got {aggregate!r}"
        )
    check_points(scores, op, "scores", 4)
    check_points(point_features, op, "point_features", 4)
    check_points(center_features, op, "center_features", 4)
    batch, n, m, out_dim = point_features.shape
    _, npoint, k, _ = scores.shape
    check(
        isinstance(knn_idx, Tensor)
        and tuple(knn_idx.shape) == (batch, npoint, k)
        and tuple(center_features.shape) == (batch, n, m, out_dim)
        and tuple(scores.shape) == (batch, npoint, k, m),
        op,
        f"expected scores (B, npoint, K, M), point_features and center_features (B, N, M, "
        f"out_dim) and knn_idx (B, npoint, K); got {tuple(scores.shape)}, "
        f"{tuple(point_features.shape)}, {tuple(center_features.shape)} and "
        f"{tuple(getattr(knn_idx, 'shape', ()))}",
        AssertionError,
    )
    check(
        not knn_idx.is_floating_point() and knn_idx.dtype != torch.bool,
        op,
        f"knn_idx must be an integer tensor, got {knn_idx.dtype}",
        TypeError,
    )
    idx = knn_idx.long()
    valid = (idx >= 0) & (idx < n)
    # mmcv's kernel asserts on a centre (first neighbour) outside the points.
    check(
        bool(valid[..., 0].all()) if valid.numel() else True,
        op,
        f"knn_idx[..., 0] (each group's centre) must index the {n} points",
        IndexError,
    )
    safe = torch.where(valid, idx, 0)
    centre = safe[..., :1].expand_as(safe)
    rows = torch.arange(batch, device=idx.device).view(batch, 1, 1)
    # (B, npoint, K, M, out_dim) neighbour minus centre features, masked where invalid.
    diff = point_features[rows, safe] - center_features[rows, centre]
    diff = torch.where(valid[..., None, None], diff, 0)
    return torch.einsum("bnkm,bnkmo->bonk", scores, diff)


AssignScoreWithK = op_function("AssignScoreWithK", assign_score_withk, __name__)
