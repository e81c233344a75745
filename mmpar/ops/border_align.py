"""mmcv 1.x's ``mmcv.ops.border_align``: BorderDet's max pooling along each side of a box.

For each box and each side (top, left, bottom, right), ``pool_size + 1`` points are sampled
from one corner along that side: top from (x1, y1) rightwards, left from (x1, y1) downwards,
bottom from (x2, y2) leftwards, right from (x2, y2) upwards. Each side reads its own quarter of
the channels, samples bilinearly (mmcv's rule, :mod:`mmpar.ops._bilinear`) and keeps the
maximum; the gradient flows to the four taps of the sample that won.

mmcv 1.7.2 has this kernel for CUDA only; this is PyTorch code for any device, following that
kernel's arithmetic: the walk adds the step to the point ``pool_size`` times (float sums in
that order, as the kernel does), the first of equal maxima wins, and the backward pass puts the
winning point back at ``corner + step * index`` with one rounding (the CUDA kernel's fused
multiply-add), which can differ from the forward's walked point in the last bit.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.autograd import Function
from torch.autograd.function import once_differentiable

from mmpar.utils.compat_errors import CheckTypeError, CheckValueError

from ._bilinear import bilinear_columns, bilinear_corners, bilinear_weights

__all__ = ["BorderAlign", "BorderAlignFunction", "border_align"]


def _walks(boxes: Tensor, pool_size: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Start points and steps of the four walks of every box: each ``(N, K, 4)``.

    Sides in mmcv's order (top, left, bottom, right); returns ``(x, y, step_x, step_y)``.
    """
    x1, y1, x2, y2 = boxes.unbind(-1)
    along_x = (x2 - x1) / pool_size
    along_y = (y2 - y1) / pool_size
    zero = torch.zeros_like(x1)
    x = torch.stack([x1, x1, x2, x2], dim=-1)
    y = torch.stack([y1, y1, y2, y2], dim=-1)
    step_x = torch.stack([along_x, zero, -along_x, zero], dim=-1)
    step_y = torch.stack([zero, along_y, zero, -along_y], dim=-1)
    return x, y, step_x, step_y


def _tap_rows(
    x: Tensor, y: Tensor, height: int, width: int
) -> tuple[Tensor, list[Tensor], list[Tensor]]:
    """Rows of the ``(N * 4 * H * W, C)`` feature matrix each walk point reads, and weights.

    ``x``/``y`` are ``(N, K, 4)`` points; returns ``inside`` and, per tap, the row index and the
    weight (``(N * K * 4,)`` and ``(N * K * 4, 1)``).
    """
    batch, _, sides = x.shape
    # A NaN point (a NaN box) is outside, like a point far off the map: its sample is 0.
    x = torch.nan_to_num(x, nan=-2.0)
    y = torch.nan_to_num(y, nan=-2.0)
    corners = bilinear_corners(height, width, y, x)
    ly, lx, inside = corners[4:]
    weights = bilinear_weights(ly, lx)
    plane = torch.arange(batch * sides, device=x.device).view(batch, 1, sides)
    rows = bilinear_columns(plane, height, width, corners).reshape(-1, 4).unbind(1)
    return inside.reshape(-1, 1), list(rows), [w.reshape(-1, 1) for w in weights]


def _feature_rows(input: Tensor) -> Tensor:  # noqa: A002
    """``(N, 4C, H, W)`` -> ``(N * 4 * H * W, C)``: one row of channels per side and pixel."""
    batch, channels, height, width = input.shape
    quarter = channels // 4
    return input.view(batch, 4, quarter, height * width).transpose(2, 3).reshape(-1, quarter)


def _check(input: Tensor, boxes: Tensor, pool_size: int) -> None:  # noqa: A002
    if not isinstance(pool_size, int) or isinstance(pool_size, bool) or pool_size < 1:
        raise CheckTypeError(f"border_align: pool_size must be an int >= 1, got {pool_size!r}")
    if boxes.dim() != 3:
        raise CheckValueError(
            f"border_align: boxes must be with shape [B, H*W, 4], got {tuple(boxes.shape)}"
        )
    if boxes.size(2) != 4:
        raise CheckValueError(
            "border_align: the last dimension of boxes must be (x1, y1, x2, y2), got "
            f"{tuple(boxes.shape)}"
        )
    if input.dim() != 4 or input.size(1) % 4 != 0:
        raise CheckValueError(
            "border_align: the channel for input feature must be divisible by factor 4 "
            f"(input (N, 4C, H, W)), got {tuple(input.shape)}"
        )
    if boxes.size(0) != input.size(0):
        raise CheckValueError(
            f"border_align: boxes {tuple(boxes.shape)} and input {tuple(input.shape)} must have "
            "the same batch size"
        )
    if boxes.size(1) and input.size(0) and input.size(1) and 0 in input.shape[2:]:
        raise CheckValueError(
            f"border_align: input {tuple(input.shape)} has no pixel to sample the boxes from"
        )


class BorderAlignFunction(Function):
    """The autograd function of :func:`border_align` (mmcv's name)."""

    @staticmethod
    def symbolic(g, input, boxes, pool_size):  # noqa: A002, ANN001, ANN205, D102
        return g.op("mmcv::MMCVBorderAlign", input, boxes, pool_size_i=pool_size)

    @staticmethod
    def forward(ctx, input: Tensor, boxes: Tensor, pool_size: int) -> Tensor:  # type: ignore[override]  # noqa: A002, ANN001, E501
        """Sample, walk and keep the maxima; save the winners' indices for the backward."""
        _check(input, boxes, pool_size)
        batch, channels, height, width = input.shape
        quarter, count = channels // 4, boxes.size(1)
        boxes = boxes.to(input.dtype)
        ctx.pool_size = pool_size
        ctx.input_shape = input.shape
        shape = (batch, count, 4, quarter)
        if input.numel() == 0 or count == 0:
            argmax = torch.zeros(shape, dtype=torch.int32, device=input.device)
            ctx.save_for_backward(boxes, argmax)
            return input.new_zeros(shape).permute(0, 3, 1, 2).contiguous()
        features = _feature_rows(input.contiguous())
        x, y, step_x, step_y = _walks(boxes, pool_size)
        best = argmax = None
        for index in range(pool_size + 1):
            if index:
                x = x + step_x
                y = y + step_y
            inside, rows, weights = _tap_rows(x, y, height, width)
            # w1*v1 + w2*v2 + w3*v3 + w4*v4, summed left to right as the kernel does.
            value = features.index_select(0, rows[0]) * weights[0]
            for row, weight in zip(rows[1:], weights[1:]):
                value = value + features.index_select(0, row) * weight
            value = torch.where(inside, value, value.new_zeros(()))
            if best is None:
                best = value
                argmax = torch.zeros(value.shape, dtype=torch.int32, device=value.device)
            else:
                better = value > best  # strictly: the first of equal maxima wins
                best = torch.where(better, value, best)
                argmax = argmax.masked_fill(better, index)
        ctx.save_for_backward(boxes, argmax.view(shape))
        return best.view(shape).permute(0, 3, 1, 2).contiguous()

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output: Tensor) -> tuple[Tensor, None, None]:  # type: ignore[override]  # noqa: ANN001
        """Send each output's gradient to the four taps of its winning sample."""
        boxes, argmax = ctx.saved_tensors
        batch, channels, height, width = ctx.input_shape
        grad_rows = grad_output.new_zeros(batch * 4 * height * width, channels // 4)
        if grad_output.numel():
            grad = grad_output.permute(0, 2, 3, 1).reshape(-1, channels // 4)
            winner = argmax.reshape(-1, channels // 4)
            # The CUDA kernel recomputes the point as corner + step * index in one fused
            # multiply-add; in double, then rounded once, that is the same number.
            wide = torch.float64 if boxes.dtype != torch.float64 else boxes.dtype
            x0, y0, step_x, step_y = (t.to(wide) for t in _walks(boxes, ctx.pool_size))
            for index in range(ctx.pool_size + 1):
                x = (x0 + step_x * index).to(boxes.dtype)
                y = (y0 + step_y * index).to(boxes.dtype)
                inside, rows, weights = _tap_rows(x, y, height, width)
                share = torch.where((winner == index) & inside, grad, grad.new_zeros(()))
                for row, weight in zip(rows, weights):
                    grad_rows.index_add_(0, row, share * weight)
        grad_input = grad_rows.view(batch, 4, height * width, channels // 4).transpose(2, 3)
        return grad_input.reshape(ctx.input_shape), None, None


def border_align(input: Tensor, boxes: Tensor, pool_size: int) -> Tensor:  # noqa: A002
    """Max-pool ``pool_size + 1`` bilinear samples along each side of each box.

    Args:
        input: Features ``(N, 4C, H, W)``: channels ``[0, C)`` are read along the top side,
            ``[C, 2C)`` the left, ``[2C, 3C)`` the bottom, ``[3C, 4C)`` the right.
        boxes: Boxes ``(N, K, 4)`` as ``(x1, y1, x2, y2)`` (BorderDet: one per pixel, K = H*W).
        pool_size: Samples per side, minus one (the start and end corners are both sampled).

    Returns:
        ``(N, C, K, 4)``: the pooled features, sides in the order (top, left, bottom, right).

    Raises:
        CheckValueError: Bad shapes (mmcv asserts those of ``boxes`` and the channel count).
        CheckTypeError: ``pool_size`` is not an int >= 1.
    """
    return BorderAlignFunction.apply(input, boxes, pool_size)


class BorderAlign(nn.Module):
    """Border align pooling (BorderDet, https://arxiv.org/abs/2007.11056) as a layer.

    Args:
        pool_size: Samples per side, minus one.

    Raises:
        CheckValueError: Bad shapes of ``input`` / ``boxes`` (as :func:`border_align`).
        CheckTypeError: ``pool_size`` is not an int >= 1 (raised at ``forward``).
    """

    def __init__(self, pool_size: int) -> None:
        super().__init__()
        self.pool_size = pool_size

    def forward(self, input: Tensor, boxes: Tensor) -> Tensor:  # noqa: A002
        """Apply :func:`border_align`: ``(N, 4C, H, W)``, ``(N, K, 4)`` -> ``(N, C, K, 4)``."""
        return border_align(input, boxes, self.pool_size)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(pool_size={self.pool_size})"
