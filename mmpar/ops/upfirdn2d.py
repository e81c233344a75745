"""``upfirdn2d``: upsample, FIR-filter, downsample (StyleGAN2), in PyTorch.

mmcv ran its own PyTorch version on the CPU and a CUDA kernel on the GPU; this one runs on
both. Per channel: insert ``up - 1`` zeros after every pixel, pad (a negative pad crops),
convolve with ``kernel`` (a true convolution: the kernel is flipped), keep every ``down``-th
pixel.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

from mmpar.utils import to_2tuple  # mmcv imports it into this module

from ._autograd import op_function

__all__ = ["UpFirDn2d", "UpFirDn2dBackward", "to_2tuple", "upfirdn2d", "upfirdn2d_native"]


def _pair(value: int | Sequence[int]) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else (int(value[0]), int(value[1]))


def upfirdn2d(
    input: Tensor,  # noqa: A002 (mmcv's argument name)
    kernel: Tensor,
    up: int | Sequence[int] = 1,
    down: int | Sequence[int] = 1,
    pad: Sequence[int] = (0, 0),
) -> Tensor:
    """Upsample, filter and downsample each channel of ``input``.

    Args:
        input: ``(N, C, H, W)``.
        kernel: The 2D FIR filter ``(kh, kw)``.
        up: Upsampling factor, or ``(x, y)``.
        down: Downsampling factor, or ``(x, y)``.
        pad: ``(x0, x1)`` (the same for y) or ``(x0, x1, y0, y1)``; negative values crop.

    Returns:
        ``(N, C, H', W')`` with ``H' = (H * up_y + y0 + y1 - kh) // down_y + 1`` (``W'`` alike).

    Raises:
        ValueError: ``input`` is not 4-D (it is unpacked as ``N, C, H, W``).
        IndexError: ``kernel`` is not 2-D.
        RuntimeError: Negative ``pad`` crops the input below the kernel size (torch's
            convolution names the sizes).
    """
    up_x, up_y = _pair(up)
    down_x, down_y = _pair(down)
    if len(pad) == 2:
        pad = (pad[0], pad[1], pad[0], pad[1])
    x0, x1, y0, y1 = pad
    n, c, h, w = input.shape
    out = input.reshape(n * c, 1, h, w)
    if up_x > 1 or up_y > 1:
        spread = out.new_zeros(n * c, 1, h * up_y, w * up_x)
        spread[..., ::up_y, ::up_x] = out
        out = spread
    out = F.pad(out, [max(x0, 0), max(x1, 0), max(y0, 0), max(y1, 0)])
    out = out[
        ...,
        max(-y0, 0) : out.shape[-2] - max(-y1, 0),
        max(-x0, 0) : out.shape[-1] - max(-x1, 0),
    ]
    weight = torch.flip(kernel, [0, 1]).to(out.dtype).view(1, 1, *kernel.shape)
    out = F.conv2d(out, weight)[..., ::down_y, ::down_x]
    return out.reshape(n, c, out.shape[-2], out.shape[-1])


def upfirdn2d_native(
    input: Tensor,  # noqa: A002 (mmcv's argument name)
    kernel: Tensor,
    up_x: int,
    up_y: int,
    down_x: int,
    down_y: int,
    pad_x0: int,
    pad_x1: int,
    pad_y0: int,
    pad_y1: int,
) -> Tensor:
    """:func:`upfirdn2d` with every factor spelled out (mmcv's name for its PyTorch path).

    Args:
        input: ``(N, C, H, W)``.
        kernel: The 2D FIR filter.
        up_x: Horizontal upsampling factor.
        up_y: Vertical upsampling factor.
        down_x: Horizontal downsampling factor.
        down_y: Vertical downsampling factor.
        pad_x0: Left padding (negative crops).
        pad_x1: Right padding.
        pad_y0: Top padding.
        pad_y1: Bottom padding.

    Returns:
        The filtered tensor.
    """
    return upfirdn2d(
        input, kernel, (up_x, up_y), (down_x, down_y), (pad_x0, pad_x1, pad_y0, pad_y1)
    )


def _upfirdn2d_input_grad(
    grad_output: Tensor,
    kernel: Tensor,
    grad_kernel: Tensor,
    up: tuple,
    down: tuple,
    pad: tuple,
    g_pad: tuple,
    in_size: Sequence[int],
    out_size: Sequence[int],
) -> Tensor:
    # The adjoint of upfirdn2d: the flipped kernel, up and down swapped, the padding g_pad.
    grad = grad_output.reshape(-1, 1, out_size[0], out_size[1])
    grad_input = upfirdn2d_native(grad, grad_kernel, *down, *up, *g_pad)
    return grad_input.reshape(*in_size)


UpFirDn2dBackward = op_function(
    "UpFirDn2dBackward",
    _upfirdn2d_input_grad,
    __name__,
    doc="""The backward of :func:`upfirdn2d` as mmcv's autograd function.

    ``apply(grad_output, kernel, grad_kernel, up, down, pad, g_pad, in_size, out_size)`` gives
    the gradient of the input of ``upfirdn2d(input, kernel, up, down, pad)`` (``input`` of
    ``in_size``), with ``grad_kernel`` the flipped kernel and ``g_pad`` the padding of the
    adjoint (what :class:`UpFirDn2d` computes); it is differentiable in ``grad_output``.
    """,
)


UpFirDn2d = op_function(
    "UpFirDn2d",
    upfirdn2d,
    __name__,
    doc="""mmcv's autograd function of :func:`upfirdn2d`.

    ``apply(input, kernel, up, down, pad)`` with ``up`` and ``down`` as ``(x, y)`` and ``pad``
    as ``(x0, x1, y0, y1)``.
    """,
)
