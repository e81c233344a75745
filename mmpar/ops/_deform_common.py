"""What DCNv1 (deform_conv) and DCNv2 (modulated_deform_conv) share.

Argument checks, the offset layer, and mmcv's offset gradient at the map's border.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn.modules.utils import _pair, _single

from mmpar.cnn.types import IntPair


class _OffsetGradInside(torch.autograd.Function):
    """Identity on the offsets whose backward zeroes the gradient of taps mmcv zeroes.

    mmcv's offset gradient (``get_coordinate_weight``) is 0 for a tap whose sampling point
    is not inside ``(-1, H) x (-1, W)``; torchvision's is a one-sided derivative for a point
    at exactly -1 (in y or x). Forward values and the input/weight gradients are the same.
    """

    @staticmethod
    def forward(ctx, offset: Tensor, inside: Tensor) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(inside)
        return offset.view_as(offset)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None]:  # type: ignore[override]
        (inside,) = ctx.saved_tensors
        return grad * inside, None


def mmcv_offset_gradient(
    offset: Tensor,
    input: Tensor,  # noqa: A002 (mmcv's argument name)
    weight: Tensor,
    stride: IntPair,
    padding: IntPair,
    dilation: IntPair,
) -> Tensor:
    """``offset`` unchanged, with mmcv's offset gradient when it is differentiated.

    Args:
        offset: ``(N, deform_groups * 2 * kh * kw, H_out, W_out)``, ``y, x`` per tap.
        input: The convolution's input ``(N, C, H, W)`` (its size only).
        weight: The convolution's weight ``(C_out, C_in // groups, kh, kw)`` (its size only).
        stride: As for the convolution.
        padding: As for the convolution.
        dilation: As for the convolution.
    """
    if not (torch.is_grad_enabled() and offset.requires_grad):
        return offset
    n, channels, h_out, w_out = offset.shape
    kh, kw = weight.shape[2:]
    stride, padding, dilation = _pair(stride), _pair(padding), _pair(dilation)
    taps = offset.detach().view(n, -1, kh, kw, 2, h_out, w_out)
    dev, dtype = offset.device, offset.dtype
    # Sampling point of tap (i, j) at output (ho, wo): ho * stride - pad + i * dilation + dy,
    # the integer part summed first and converted, as the kernels do.
    base_y = (
        torch.arange(h_out, device=dev)[None, :] * stride[0]
        - padding[0]
        + torch.arange(kh, device=dev)[:, None] * dilation[0]
    ).to(dtype)  # (kh, h_out)
    base_x = (
        torch.arange(w_out, device=dev)[None, :] * stride[1]
        - padding[1]
        + torch.arange(kw, device=dev)[:, None] * dilation[1]
    ).to(dtype)  # (kw, w_out)
    y = base_y[:, None, :, None] + taps[:, :, :, :, 0]
    x = base_x[None, :, None, :] + taps[:, :, :, :, 1]
    height, width = input.shape[2:]
    inside = (y > -1) & (y < height) & (x > -1) & (x < width)
    inside = inside[:, :, :, :, None].expand(-1, -1, -1, -1, 2, -1, -1)
    return _OffsetGradInside.apply(offset, inside.reshape(n, channels, h_out, w_out).to(dtype))


def _check_groups(
    input: Tensor,  # noqa: A002
    offset: Tensor,
    weight: Tensor,
    groups: int,
    deform_groups: int,
    offset_parts: int = 2,
) -> None:
    # torchvision infers both group counts from the shapes; a mismatch with the arguments
    # would otherwise run silently with other groups than the caller asked for.
    taps = weight.shape[2] * weight.shape[3]
    if input.size(1) != weight.size(1) * groups:
        raise ValueError(
            f"input has {input.size(1)} channels but weight {tuple(weight.shape)} with "
            f"groups={groups} expects {weight.size(1) * groups}"
        )
    if offset.size(1) != deform_groups * offset_parts * taps:
        raise ValueError(
            f"offset has {offset.size(1)} channels; deform_groups={deform_groups} with a "
            f"{weight.shape[2]}x{weight.shape[3]} kernel needs "
            f"{deform_groups * offset_parts * taps}"
        )


def _set_conv_attributes(
    layer: nn.Module,
    in_channels: int,
    out_channels: int,
    kernel_size: IntPair,
    stride: IntPair,
    padding: IntPair,
    dilation: IntPair,
    groups: int,
    deform_groups: int,
) -> None:
    """Give a deformable conv layer a ConvNd's attributes and an uninitialised ``weight``.

    mmcv's deformable convs set the attributes of ``nn.Conv2d`` so that code treating them as
    one (FLOP counters, ``fuse_conv_bn``-style inspection) finds them.
    """
    layer.in_channels = in_channels
    layer.out_channels = out_channels
    layer.kernel_size = _pair(kernel_size)
    layer.stride = _pair(stride)
    layer.padding = _pair(padding)
    layer.dilation = _pair(dilation)
    layer.groups = groups
    layer.deform_groups = deform_groups
    layer.transposed = False
    layer.output_padding = _single(0)
    layer.weight = nn.Parameter(
        torch.empty(out_channels, in_channels // groups, *layer.kernel_size)
    )


def _offset_conv(layer: nn.Module, values_per_tap: int) -> nn.Conv2d:
    """The Pack layers' ``conv_offset``: ``values_per_tap`` channels per tap and deform group.

    It has the layer's kernel, stride, padding and dilation, so its output is on the grid the
    deformable convolution samples; its weights are zeroed by the caller (mmcv's init).
    """
    taps = layer.kernel_size[0] * layer.kernel_size[1]
    return nn.Conv2d(
        layer.in_channels,
        layer.deform_groups * values_per_tap * taps,
        kernel_size=layer.kernel_size,
        stride=layer.stride,
        padding=layer.padding,
        dilation=layer.dilation,
        bias=True,
    )
