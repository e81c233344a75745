"""Points sampling layers (mmcv.ops.points_sampler): D-FPS, F-FPS and their union FS."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from mmpar.runner import force_fp32

from .furthest_point_sample import furthest_point_sample, furthest_point_sample_with_dist

__all__ = [
    "DFPSSampler",
    "FFPSSampler",
    "FSSampler",
    "PointsSampler",
    "calc_square_dist",
    "get_sampler_cls",
]


def calc_square_dist(point_feat_a: Tensor, point_feat_b: Tensor, norm: bool = True) -> Tensor:
    """Distances between two sets of point features.

    Args:
        point_feat_a: ``(B, N, C)`` features.
        point_feat_b: ``(B, M, C)`` features.
        norm: Return the Euclidean distance divided by ``C`` (mmcv's meaning of "normalised")
            instead of the squared distance.

    Returns:
        ``(B, N, M)`` distances.
    """
    dist = torch.cdist(point_feat_a, point_feat_b)
    return dist / point_feat_a.shape[-1] if norm else dist.square()


class DFPSSampler(nn.Module):
    """Furthest point sampling on Euclidean distances of the points."""

    def forward(self, points: Tensor, features: Tensor | None, npoint: int) -> Tensor:
        """Return ``(B, npoint)`` int32 indices picked by D-FPS (``features`` unused)."""
        return furthest_point_sample(points.contiguous(), npoint)


class FFPSSampler(nn.Module):
    """Furthest point sampling on distances between point coordinates + features."""

    def forward(self, points: Tensor, features: Tensor | None, npoint: int) -> Tensor:
        """Return ``(B, npoint)`` int32 indices picked by F-FPS.

        Raises:
            AssertionError: When ``features`` is None (as mmcv asserts).
        """
        assert features is not None, "feature input to FFPS_Sampler should not be None"
        features_for_fps = torch.cat([points, features.transpose(1, 2)], dim=2)
        dist = calc_square_dist(features_for_fps, features_for_fps, norm=False)
        return furthest_point_sample_with_dist(dist, npoint)


class FSSampler(nn.Module):
    """F-FPS and D-FPS together: ``npoint`` picks of each, concatenated."""

    def forward(self, points: Tensor, features: Tensor | None, npoint: int) -> Tensor:
        """Return ``(B, 2 * npoint)`` int32 indices: the F-FPS picks, then the D-FPS ones.

        Raises:
            AssertionError: When ``features`` is None (as mmcv asserts).
        """
        assert features is not None, "feature input to FS_Sampler should not be None"
        ffps = FFPSSampler()(points, features, npoint)
        dfps = DFPSSampler()(points, features, npoint)
        return torch.cat([ffps, dfps], dim=1)


_SAMPLERS: dict[str, type[nn.Module]] = {
    "D-FPS": DFPSSampler,
    "F-FPS": FFPSSampler,
    "FS": FSSampler,
}


def get_sampler_cls(sampler_type: str) -> type[nn.Module]:
    """Return the sampler class of ``sampler_type``: ``'D-FPS'``, ``'F-FPS'`` or ``'FS'``.

    Raises:
        KeyError: For any other name (as mmcv), listing the valid ones.
    """
    try:
        return _SAMPLERS[sampler_type]
    except KeyError:
        raise KeyError(
            f"mmpar.ops.PointsSampler: sampler_type {sampler_type!r} is not one of "
            f"{sorted(_SAMPLERS)}"
        ) from None


class PointsSampler(nn.Module):
    """Sample points in consecutive ranges, each with its own sampler.

    Args:
        num_point: Number of points to sample in each range.
        fps_mod_list: Sampler of each range: ``'D-FPS'`` (point distances), ``'F-FPS'``
            (feature distances) or ``'FS'`` (both). Default: ``['D-FPS']``.
        fps_sample_range_list: End (exclusive) of each range along the points; ``-1`` means
            the rest of the points. Default: ``[-1]``.

    Raises:
        AssertionError: When the three lists differ in length (as mmcv asserts).
        KeyError: For an unknown sampler name.
    """

    def __init__(
        self,
        num_point: list[int],
        fps_mod_list: list[str] = ["D-FPS"],  # noqa: B006 (mmcv's default, never mutated)
        fps_sample_range_list: list[int] = [-1],  # noqa: B006
    ) -> None:
        super().__init__()
        assert len(num_point) == len(fps_mod_list) == len(fps_sample_range_list), (
            "PointsSampler: num_point, fps_mod_list and fps_sample_range_list must have the "
            f"same length, got {len(num_point)}, {len(fps_mod_list)} and "
            f"{len(fps_sample_range_list)}"
        )
        self.num_point = num_point
        self.fps_sample_range_list = fps_sample_range_list
        self.samplers = nn.ModuleList(get_sampler_cls(mod)() for mod in fps_mod_list)
        self.fp16_enabled = False

    @force_fp32()
    def forward(self, points_xyz: Tensor, features: Tensor | None) -> Tensor:
        """Sample each range and concatenate the indices.

        Args:
            points_xyz: ``(B, N, 3)`` point coordinates.
            features: ``(B, C, N)`` point features, or None (D-FPS only).

        Returns:
            ``(B, total)`` int32 indices into the ``N`` points.

        Raises:
            AssertionError: When a range end is not below ``N``.
        """
        indices = []
        start = 0
        for end, sampler, npoint in zip(self.fps_sample_range_list, self.samplers, self.num_point):
            assert end < points_xyz.shape[1], (
                f"PointsSampler: fps_sample_range {end} must be below the number of points "
                f"{points_xyz.shape[1]}"
            )
            stop = None if end == -1 else end
            sample_xyz = points_xyz[:, start:stop]
            sample_features = None if features is None else features[:, :, start:stop]
            indices.append(sampler(sample_xyz.contiguous(), sample_features, npoint) + start)
            start = end
        return torch.cat(indices, dim=1)
