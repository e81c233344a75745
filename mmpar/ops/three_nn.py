"""The three nearest neighbours (mmcv.ops.three_nn), in PyTorch on any device."""

from __future__ import annotations

import torch
from torch import Tensor

from ._autograd import op_function
from ._points_common import check_pair, check_points, chunk_ranges, squared_distances

__all__ = ["ThreeNN", "three_nn"]


def three_nn(target: Tensor, source: Tensor) -> tuple[Tensor, Tensor]:
    """Find the three nearest ``source`` points of each ``target`` point.

    As mmcv's kernel: squared distances summed in x, y, z order, nearest first, the lowest
    index first among equal distances; with fewer than three source points the missing
    neighbours have distance ``inf`` and index 0. Not differentiable.

    Args:
        target: ``(B, N, 3)`` points to find neighbours for.
        source: ``(B, M, 3)`` points to find them among.

    Returns:
        ``(dist, idx)``: ``(B, N, 3)`` Euclidean distances and ``(B, N, 3)`` int32 indices.

    Raises:
        TypeError: When an input is not a floating tensor.
        AssertionError: On wrong shapes or batch sizes.
    """
    op = "three_nn"
    check_points(target, op, "target", 3, 3)
    check_points(source, op, "source", 3, 3)
    check_pair(op, target, source, "target", "source")
    batch, n = target.shape[:2]
    m = source.shape[1]
    dist2 = torch.full((batch, n, 3), float("inf"), dtype=target.dtype, device=target.device)
    idx = torch.zeros(batch, n, 3, dtype=torch.long, device=target.device)
    with torch.no_grad():
        for start, stop in chunk_ranges(n, batch * m):
            d2 = squared_distances(target[:, start:stop], source)
            for j in range(min(3, m)):
                # argmin takes the first of equal minima: the kernel's strict "<" in index order.
                best = d2.argmin(-1, keepdim=True)
                dist2[:, start:stop, j] = d2.gather(-1, best).squeeze(-1)
                idx[:, start:stop, j] = best.squeeze(-1)
                d2.scatter_(-1, best, float("inf"))
    return dist2.sqrt(), idx.to(torch.int32)


ThreeNN = op_function("ThreeNN", three_nn, __name__)
