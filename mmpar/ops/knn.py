"""k nearest neighbours (mmcv.ops.knn), in PyTorch on any device."""

from __future__ import annotations

import torch
from torch import Tensor

from ._autograd import op_function
from ._points_common import check, check_points, chunk_ranges, squared_distances

__all__ = ["KNN", "knn"]


def knn(
    k: int,
    xyz: Tensor,
    center_xyz: Tensor | None = None,
    transposed: bool = False,
) -> Tensor:
    """Find the ``k`` nearest points of each centre, nearest first.

    Distances are squared Euclidean, computed as mmcv's kernel does. Among points at exactly
    the same distance the order may differ from mmcv's heap. With ``k`` above the number of
    points the extra slots hold index 0, as in mmcv. Not differentiable (indices).

    Args:
        k: Number of neighbours, ``0 < k < 100`` (mmcv's kernel limit, kept).
        xyz: ``(B, N, 3)`` points, ``(B, 3, N)`` when ``transposed``.
        center_xyz: ``(B, M, 3)`` centres (``(B, 3, M)`` when ``transposed``); default
            ``xyz`` itself.
        transposed: Whether the coordinates are along dim 1.

    Returns:
        ``(B, k, M)`` int32 indices into the points.

    Raises:
        AssertionError: When ``k`` is out of range or a shape is wrong (as mmcv asserts).
        TypeError: When the coordinates are not floating tensors.
    """
    op = "knn"
    check(
        isinstance(k, int) and 0 < k < 100,
        op,
        f"k must be in range(1, 100), got {k!r}",
        AssertionError,
    )
    if center_xyz is None:
        center_xyz = xyz
    check_points(xyz, op, "xyz", 3)
    check_points(center_xyz, op, "center_xyz", 3)
    if transposed:
        xyz, center_xyz = xyz.transpose(2, 1), center_xyz.transpose(2, 1)
    check(
        xyz.shape[2] == 3 and center_xyz.shape[2] == 3 and xyz.shape[0] == center_xyz.shape[0],
        op,
        f"xyz and center_xyz must be (B, N, 3) and (B, M, 3) (or (B, 3, N) and (B, 3, M) "
        f"with transposed=True), got {tuple(xyz.shape)} and {tuple(center_xyz.shape)}",
        AssertionError,
    )
    check(
        xyz.device == center_xyz.device,
        op,
        "center_xyz and xyz should be put on the same device",
        AssertionError,
    )
    batch, m = center_xyz.shape[:2]
    n = xyz.shape[1]
    out = torch.zeros(batch, m, k, dtype=torch.long, device=xyz.device)
    taken = min(k, n)
    with torch.no_grad():
        for start, stop in chunk_ranges(m, batch * n):
            d2 = squared_distances(center_xyz[:, start:stop], xyz)
            out[:, start:stop, :taken] = d2.topk(taken, dim=-1, largest=False, sorted=True)[1]
    return out.to(torch.int32).transpose(2, 1).contiguous()


KNN = op_function("KNN", knn, __name__)
