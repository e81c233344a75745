"""mmcv 1.x's ``mmcv.ops.correlation``: the optical-flow cost volume (FlowNet / PWC-Net).

For every displacement ``(dy, dx)`` of the ``(2 * max_displacement + 1)**2`` patch (spaced by
``dilation_patch``), the channel-summed product of ``input1`` and ``input2`` shifted by it (zero
outside the map) is box-summed over the ``kernel_size`` window (``stride``, ``padding``,
``dilation``) by one convolution with a ones kernel. The loop is over displacements only; the
backward is the exact adjoint, which is what mmcv's CUDA kernels compute (mmcv-full 1.7.2
has no CPU kernel for this op).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.autograd.function import once_differentiable
from torch.nn.modules.utils import _pair

__all__ = ["Correlation", "CorrelationFunction"]


def _shifted_windows(
    patch: int, dilation_patch: tuple[int, int], height: int, width: int
) -> tuple[tuple[int, int], list[tuple[slice, slice]]]:
    """Where ``input2`` shifted by each displacement lies in ``input2`` padded by the reach.

    Returns:
        ``(reach, windows)``: the padding ``(rows, columns)`` on each side that keeps every
        shift inside, and per cell of the patch (row-major, the output's order) the rows and
        columns of the padded map that are ``input2`` shifted by that cell's displacement.
    """
    radius = (patch - 1) // 2
    reach = (radius * dilation_patch[0], radius * dilation_patch[1])
    windows = []
    for ph in range(patch):
        for pw in range(patch):
            top = reach[0] + (ph - radius) * dilation_patch[0]
            left = reach[1] + (pw - radius) * dilation_patch[1]
            windows.append((slice(top, top + height), slice(left, left + width)))
    return reach, windows


class CorrelationFunction(torch.autograd.Function):
    """Correlation with mmcv's argument order; use :class:`Correlation` in models."""

    @staticmethod
    def forward(  # type: ignore[override]
        ctx,
        input1: Tensor,
        input2: Tensor,
        kernel_size: int = 1,
        max_displacement: int = 1,
        stride: int = 1,
        padding: int = 1,
        dilation: int = 1,
        dilation_patch: int = 1,
    ) -> Tensor:
        """Cost volume ``(N, P, P, H_out, W_out)`` with ``P = 2 * max_displacement + 1``."""
        _check_inputs(input1, input2)
        ctx.kernel_size = _pair(kernel_size)
        ctx.patch_size = max_displacement * 2 + 1
        ctx.stride = _pair(stride)
        ctx.padding = _pair(padding)
        ctx.dilation = _pair(dilation)
        ctx.dilation_patch = _pair(dilation_patch)
        ctx.save_for_backward(input1, input2)
        n, _, height, width = input1.shape
        patch = ctx.patch_size
        reach, windows = _shifted_windows(patch, ctx.dilation_patch, height, width)
        padded2 = F.pad(input2, (reach[1], reach[1], reach[0], reach[0]))
        products = input1.new_empty(n, patch * patch, height, width)
        for k, (rows, cols) in enumerate(windows):
            torch.sum(input1 * padded2[:, :, rows, cols], dim=1, out=products[:, k])
        summed = F.conv2d(
            products.view(n * patch * patch, 1, height, width),
            _ones_kernel(ctx.kernel_size, input1),
            stride=ctx.stride,
            padding=ctx.padding,
            dilation=ctx.dilation,
        )
        return summed.view(n, patch, patch, summed.size(-2), summed.size(-1))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output: Tensor) -> tuple:  # type: ignore[override]
        """Gradients of both inputs: the adjoint of the box sum, then of each shifted product."""
        input1, input2 = ctx.saved_tensors
        n, _, height, width = input1.shape
        patch = ctx.patch_size
        grad_products = torch.nn.grad.conv2d_input(
            (n * patch * patch, 1, height, width),
            _ones_kernel(ctx.kernel_size, input1),
            grad_output.reshape(n * patch * patch, 1, *grad_output.shape[-2:]),
            stride=ctx.stride,
            padding=ctx.padding,
            dilation=ctx.dilation,
        ).view(n, patch * patch, 1, height, width)
        reach, windows = _shifted_windows(patch, ctx.dilation_patch, height, width)
        padded2 = F.pad(input2, (reach[1], reach[1], reach[0], reach[0]))
        grad1 = torch.zeros_like(input1) if ctx.needs_input_grad[0] else None
        grad2_padded = torch.zeros_like(padded2) if ctx.needs_input_grad[1] else None
        for k, (rows, cols) in enumerate(windows):
            if grad1 is not None:
                grad1.addcmul_(grad_products[:, k], padded2[:, :, rows, cols])
            if grad2_padded is not None:
                grad2_padded[:, :, rows, cols].addcmul_(grad_products[:, k], input1)
        grad2 = None
        if grad2_padded is not None:
            grad2 = grad2_padded[:, :, reach[0] : reach[0] + height, reach[1] : reach[1] + width]
            grad2 = grad2.contiguous()
        return grad1, grad2, None, None, None, None, None, None

    @staticmethod
    def _output_size(ctx, input1: Tensor) -> tuple[int, int, int, int, int]:
        """The output shape mmcv gives for the settings stored on ``ctx``."""
        height, width = input1.shape[-2:]
        kh, kw = ctx.kernel_size
        out_h = int(
            (height + 2 * ctx.padding[0] - ((kh - 1) * ctx.dilation[0] + 1)) / ctx.stride[0] + 1
        )
        out_w = int(
            (width + 2 * ctx.padding[1] - ((kw - 1) * ctx.dilation[1] + 1)) / ctx.stride[1] + 1
        )
        return (input1.size(0), ctx.patch_size, ctx.patch_size, out_h, out_w)


def _ones_kernel(kernel_size: tuple[int, int], like: Tensor) -> Tensor:
    return like.new_ones(1, 1, *kernel_size)


def _check_inputs(input1: Tensor, input2: Tensor) -> None:
    if input1.dim() != 4 or input1.shape != input2.shape:
        raise ValueError(
            "Correlation: input1 and input2 must be (N, C, H, W) of one shape, got "
            f"{tuple(input1.shape)} and {tuple(input2.shape)}"
        )


class Correlation(nn.Module):
    r"""Correlation (cost volume) of two feature maps, for optical flow.

    ``out[n, ph, pw, h, w]`` is the sum over channels and the ``kernel_size`` window at output
    position ``(h, w)`` of ``input1 * input2`` shifted by ``((ph - r) * dilation_patch,
    (pw - r) * dilation_patch)``, ``r = max_displacement``; samples outside the maps are 0.

    Args:
        kernel_size: Side of the window summed at each position.
        max_displacement: Radius ``r`` of the patch of displacements (``2r + 1`` per axis).
        stride: Step between output positions.
        padding: Zero padding around the maps (for the window, not the displacement).
        dilation: Spacing of the window's taps.
        dilation_patch: Spacing of the displacements.

    Raises:
        ValueError: At ``forward``, ``input1`` and ``input2`` are not ``(N, C, H, W)`` of one
            shape.
    """

    def __init__(
        self,
        kernel_size: int = 1,
        max_displacement: int = 1,
        stride: int = 1,
        padding: int = 0,
        dilation: int = 1,
        dilation_patch: int = 1,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.max_displacement = max_displacement
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.dilation_patch = dilation_patch

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        """Cost volume of ``input1`` against ``input2`` (both ``(N, C, H, W)``).

        Args:
            input1: First feature map.
            input2: Second feature map, shifted by each displacement.

        Returns:
            ``(N, 2r + 1, 2r + 1, H_out, W_out)``.
        """
        return CorrelationFunction.apply(
            input1,
            input2,
            self.kernel_size,
            self.max_displacement,
            self.stride,
            self.padding,
            self.dilation,
            self.dilation_patch,
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(kernel_size={self.kernel_size}, "
            f"max_displacement={self.max_displacement}, stride={self.stride}, "
            f"padding={self.padding}, dilation={self.dilation}, "
            f"dilation_patch={self.dilation_patch})"
        )
