"""Grouping of point features around centres (mmcv.ops.group_points), on any device.

``grouping_operation`` gathers features by a ``(centre, sample)`` index table;
``QueryAndGroup`` builds that table with :func:`ball_query` (or :func:`knn`) and groups the
coordinates and features; ``GroupAll`` makes one group of all points.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from ._autograd import op_function
from ._points_common import batch_counts, check, check_indices, check_points
from .ball_query import ball_query
from .knn import knn

__all__ = ["GroupAll", "GroupingOperation", "QueryAndGroup", "grouping_operation"]

_OP = "grouping_operation"


def _group_stacked(
    features: Tensor, indices: Tensor, features_batch_cnt: Tensor, indices_batch_cnt: Tensor
) -> Tensor:
    check_points(features, _OP, "features", 2)
    check(
        isinstance(indices, Tensor) and indices.dim() == 2,
        _OP,
        f"stacked indices must be (M1 + M2 + ..., nsample), got "
        f"{tuple(getattr(indices, 'shape', ()))}",
        AssertionError,
    )
    feature_counts, index_counts = batch_counts(
        _OP,
        {
            "features_batch_cnt": (features.shape[0], features_batch_cnt),
            "indices_batch_cnt": (indices.shape[0], indices_batch_cnt),
        },
    )
    counts = torch.tensor(feature_counts, dtype=torch.long, device=indices.device)
    idx_counts = torch.tensor(index_counts, dtype=torch.long, device=indices.device)
    idx = check_indices(indices, features.shape[0], _OP, "indices", allow_minus_one=True)
    # Each row's indices are local to its sample: shift them by the sample's first feature row.
    sample_of_row = torch.repeat_interleave(
        torch.arange(counts.numel(), device=idx.device), idx_counts
    )
    starts = torch.cumsum(counts, 0) - counts
    sizes = counts[sample_of_row].unsqueeze(1)
    check(
        bool((idx < sizes).all()),
        _OP,
        "a stacked index is not below its sample's number of features",
        IndexError,
    )
    valid = idx >= 0  # -1 (an empty ball of the stacked ball_query) selects nothing
    rows = torch.where(valid, idx + starts[sample_of_row].unsqueeze(1), 0)
    grouped = features[rows]  # (M, nsample, C)
    grouped = torch.where(valid.unsqueeze(-1), grouped, 0)
    return grouped.transpose(1, 2).contiguous()


def grouping_operation(
    features: Tensor,
    indices: Tensor,
    features_batch_cnt: Tensor | None = None,
    indices_batch_cnt: Tensor | None = None,
) -> Tensor:
    """Gather features into groups: ``out[b, c, p, s] = features[b, c, indices[b, p, s]]``.

    Differentiable in ``features``.

    Args:
        features: ``(B, C, N)`` features, or stacked ``(N1 + N2 + ..., C)``.
        indices: ``(B, npoint, nsample)`` int indices into the ``N`` points, or stacked
            ``(M1 + M2 + ..., nsample)`` indices local to each sample (``-1``: nothing, a zero
            output, where mmcv's kernel read outside the sample).
        features_batch_cnt: With the stacked form: int32 ``(N1, N2, ...)``.
        indices_batch_cnt: With the stacked form: int32 ``(M1, M2, ...)``.

    Returns:
        ``(B, C, npoint, nsample)``, or stacked ``(M1 + M2 + ..., C, nsample)``.

    Raises:
        TypeError: On non-floating features or non-integer indices.
        AssertionError: On wrong shapes.
        ValueError: When the stacked counts disagree with the inputs.
        IndexError: When an index is out of range.
    """
    if features_batch_cnt is not None and indices_batch_cnt is not None:
        return _group_stacked(features, indices, features_batch_cnt, indices_batch_cnt)
    check_points(features, _OP, "features", 3)
    batch, channels, n = features.shape
    check(
        isinstance(indices, Tensor) and indices.dim() == 3 and indices.shape[0] == batch,
        _OP,
        f"indices must be (B, npoint, nsample) with B = {batch}, got "
        f"{tuple(getattr(indices, 'shape', ()))}",
        AssertionError,
    )
    idx = check_indices(indices, n, _OP, "indices")
    _, npoint, nsample = idx.shape
    flat = idx.reshape(batch, 1, npoint * nsample).expand(batch, channels, npoint * nsample)
    return features.gather(2, flat).reshape(batch, channels, npoint, nsample)


def _uniform_resample(idx: Tensor) -> tuple[Tensor, Tensor]:
    """Each row's distinct indices (sorted), then random repeats of them; and their count."""
    rows, width = idx.shape[0] * idx.shape[1], idx.shape[2]
    flat = idx.reshape(rows, width).long()
    ordered = flat.sort(-1)[0]
    is_new = torch.ones_like(ordered, dtype=torch.bool)
    is_new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    slot = is_new.long().cumsum(-1) - 1
    unique = torch.zeros_like(ordered).scatter_(-1, slot, ordered)
    count = is_new.sum(-1, keepdim=True)
    position = torch.arange(width, device=idx.device).expand(rows, width)
    pick = (torch.rand(rows, width, device=idx.device) * count).long().clamp_(max=width - 1)
    source = torch.where(position < count, position, pick)
    out = unique.gather(-1, source).to(idx.dtype).reshape(idx.shape)
    return out, count.reshape(idx.shape[:2]).float()


class QueryAndGroup(nn.Module):
    """Group points around centres found by a ball query (or kNN).

    Args:
        max_radius: Radius of the balls; None uses the ``sample_num`` nearest neighbours.
        sample_num: Points per group.
        min_radius: Inner radius of the balls. Default: 0.
        use_xyz: Put the relative coordinates in front of the features. Default: True.
        return_grouped_xyz: Also return the grouped absolute coordinates. Default: False.
        normalize_xyz: Divide the relative coordinates by ``max_radius``. Default: False.
        uniform_sample: Replace each group's repeats by random draws among its distinct
            points (also returns their count with ``return_unique_cnt``). Default: False.
        return_unique_cnt: Also return each group's number of distinct points (float32, on
            the input's device; mmcv made it on the CPU). Default: False.
        return_grouped_idx: Also return the grouping indices. Default: False.

    Raises:
        AssertionError: When ``return_unique_cnt`` is set without ``uniform_sample``, or
            ``normalize_xyz`` without ``max_radius`` (as mmcv asserts).
    """

    def __init__(
        self,
        max_radius: float | None,
        sample_num: int,
        min_radius: float = 0.0,
        use_xyz: bool = True,
        return_grouped_xyz: bool = False,
        normalize_xyz: bool = False,
        uniform_sample: bool = False,
        return_unique_cnt: bool = False,
        return_grouped_idx: bool = False,
    ) -> None:
        super().__init__()
        self.max_radius = max_radius
        self.min_radius = min_radius
        self.sample_num = sample_num
        self.use_xyz = use_xyz
        self.return_grouped_xyz = return_grouped_xyz
        self.normalize_xyz = normalize_xyz
        self.uniform_sample = uniform_sample
        self.return_unique_cnt = return_unique_cnt
        self.return_grouped_idx = return_grouped_idx
        if self.return_unique_cnt:
            assert self.uniform_sample, (
                "uniform_sample should be True when returning the count of unique samples"
            )
        if self.max_radius is None:
            assert not self.normalize_xyz, "can not normalize grouped xyz when max_radius is None"

    def forward(
        self, points_xyz: Tensor, center_xyz: Tensor, features: Tensor | None = None
    ) -> Tensor | tuple[Tensor, ...]:
        """Group the points around each centre.

        Args:
            points_xyz: ``(B, N, 3)`` point coordinates.
            center_xyz: ``(B, npoint, 3)`` centre coordinates.
            features: ``(B, C, N)`` point features, or None.

        Returns:
            ``(B, 3 + C, npoint, sample_num)`` grouped relative coordinates and features
            (``3`` or ``C`` rows when one part is left out), followed, when asked, by the
            grouped coordinates, the distinct counts and the indices, as a tuple.

        Raises:
            AssertionError: With no features and ``use_xyz=False`` (nothing to group).
        """
        if self.max_radius is None:
            idx = knn(self.sample_num, points_xyz, center_xyz, False).transpose(1, 2).contiguous()
        else:
            idx = ball_query(
                self.min_radius, self.max_radius, self.sample_num, points_xyz, center_xyz
            )
        unique_cnt = None
        if self.uniform_sample:
            idx, unique_cnt = _uniform_resample(idx)
        grouped_xyz = grouping_operation(points_xyz.transpose(1, 2).contiguous(), idx)
        grouped_xyz_diff = grouped_xyz - center_xyz.transpose(1, 2).unsqueeze(-1)
        if self.normalize_xyz and self.max_radius is not None:  # the constructor ties them
            grouped_xyz_diff = grouped_xyz_diff / self.max_radius
        if features is not None:
            grouped_features = grouping_operation(features, idx)
            new_features = (
                torch.cat([grouped_xyz_diff, grouped_features], dim=1)
                if self.use_xyz
                else grouped_features
            )
        else:
            assert self.use_xyz, "Cannot have not features and not use xyz as a feature!"
            new_features = grouped_xyz_diff
        ret = [new_features]
        if self.return_grouped_xyz:
            ret.append(grouped_xyz)
        if self.return_unique_cnt:
            assert unique_cnt is not None
            ret.append(unique_cnt)
        if self.return_grouped_idx:
            ret.append(idx)
        return ret[0] if len(ret) == 1 else tuple(ret)


class GroupAll(nn.Module):
    """One group holding every point.

    Args:
        use_xyz: Put the coordinates in front of the features. Default: True.
    """

    def __init__(self, use_xyz: bool = True) -> None:
        super().__init__()
        self.use_xyz = use_xyz

    def forward(
        self, xyz: Tensor, new_xyz: Tensor | None, features: Tensor | None = None
    ) -> Tensor:
        """Return ``(B, 3 + C, 1, N)`` coordinates and features (``new_xyz`` unused).

        Args:
            xyz: ``(B, N, 3)`` coordinates.
            new_xyz: Unused (mmcv's signature).
            features: ``(B, C, N)`` features, or None (coordinates only).

        Raises:
            RuntimeError: ``features`` do not match ``xyz``'s batch and point counts (torch's
                concatenation names the sizes).
        """
        grouped_xyz = xyz.transpose(1, 2).unsqueeze(2)
        if features is None:
            return grouped_xyz
        grouped_features = features.unsqueeze(2)
        if self.use_xyz:
            return torch.cat([grouped_xyz, grouped_features], dim=1)
        return grouped_features


GroupingOperation = op_function("GroupingOperation", grouping_operation, __name__)
