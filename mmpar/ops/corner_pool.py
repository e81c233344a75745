"""mmcv 1.x's ``mmcv.ops.corner_pool``: CornerNet's corner pooling as a running maximum."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from ._autograd import op_function

__all__ = [
    "BottomPoolFunction",
    "CornerPool",
    "LeftPoolFunction",
    "RightPoolFunction",
    "TopPoolFunction",
]


class CornerPool(nn.Module):
    """Corner pooling of `CornerNet <https://arxiv.org/abs/1808.01244>`_.

    Each output value is the maximum of the input from that position to the border the mode
    names, along one axis: ``'top'`` takes the maximum over the rows below and including it
    (the pooled value travels upwards), ``'bottom'`` over the rows above, ``'left'`` over the
    columns to the right, ``'right'`` over the columns to the left.

    Args:
        mode: One of ``'top'``, ``'bottom'``, ``'left'``, ``'right'``.

    Raises:
        AssertionError: ``mode`` is not one of the four (as mmcv).
    """

    # mode -> (dimension of an NCHW tensor, whether the scan runs from the far end)
    cummax_dim_flip = {
        "bottom": (2, False),
        "left": (3, True),
        "right": (3, False),
        "top": (2, True),
    }

    def __init__(self, mode: str) -> None:
        super().__init__()
        assert mode in self.cummax_dim_flip, (
            f"mode must be one of {sorted(self.cummax_dim_flip)}, got {mode!r}"
        )
        self.mode = mode

    def forward(self, x: Tensor) -> Tensor:
        """Pool ``x`` (N, C, H, W) in this layer's direction; the shape is kept."""
        dim, flip = self.cummax_dim_flip[self.mode]
        if flip:
            x = x.flip(dim)
        pooled = torch.cummax(x, dim=dim)[0]
        return pooled.flip(dim) if flip else pooled


def _pool_function(mode: str) -> type:
    # mmcv's <Mode>PoolFunction.apply(input) is CornerPool(mode)(input).
    layer = CornerPool(mode)

    def corner_pool(input: Tensor) -> Tensor:  # noqa: A002 (mmcv's argument name)
        return layer(input)

    name = f"{mode.capitalize()}PoolFunction"
    doc = f"mmcv's autograd ``Function`` of ``CornerPool('{mode}')``."
    return op_function(name, corner_pool, __name__, doc=doc)


TopPoolFunction = _pool_function("top")
BottomPoolFunction = _pool_function("bottom")
LeftPoolFunction = _pool_function("left")
RightPoolFunction = _pool_function("right")
