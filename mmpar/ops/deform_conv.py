"""Deformable convolution (DCNv1) with mmcv's classes and state dict, on torchvision's kernel.

The offset layout is the same in both: per deformable group, ``2 * kh * kw`` channels ordered
``y0, x0, y1, x1, ...`` over the kernel positions in row-major order (mmcv's own MLU path hands
its offsets to torchvision unchanged).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
import torchvision
from torch import Tensor, nn
from torch.nn.modules.utils import _pair, _single

from mmpar.cnn import CONV_LAYERS
from mmpar.cnn.types import IntPair

# IS_MLU_AVAILABLE, digit_version, print_log: mmcv's module has them too (from mmcv.utils).
from mmpar.utils import IS_MLU_AVAILABLE, deprecated_api_warning, digit_version, print_log

from ._autograd import op_function

__all__ = [
    "IS_MLU_AVAILABLE",
    "DeformConv2d",
    "DeformConv2dFunction",
    "DeformConv2dPack",
    "deform_conv2d",
    "digit_version",
    "print_log",
]


def deform_conv2d(
    input: Tensor,  # noqa: A002 (mmcv's argument name)
    offset: Tensor,
    weight: Tensor,
    stride: IntPair = 1,
    padding: IntPair = 0,
    dilation: IntPair = 1,
    groups: int = 1,
    deform_groups: int = 1,
    bias: bool = False,
    im2col_step: int = 32,
) -> Tensor:
    """Deformable 2D convolution: each kernel tap samples ``input`` at a learned offset.

    Args:
        input: Features ``(N, C_in, H, W)``.
        offset: ``(N, deform_groups * 2 * kh * kw, H_out, W_out)``, ``y, x`` per tap.
        weight: ``(C_out, C_in // groups, kh, kw)``.
        stride: As for :class:`torch.nn.Conv2d`.
        padding: As for :class:`torch.nn.Conv2d`.
        dilation: As for :class:`torch.nn.Conv2d`.
        groups: Convolution groups (read from ``weight``'s shape by the kernel).
        deform_groups: Groups of input channels sharing one offset field (read from
            ``offset``'s shape by the kernel).
        bias: Must be False, as in mmcv (the op has no bias).
        im2col_step: Accepted for compatibility (a CUDA batching detail of mmcv's kernel).

    Returns:
        ``(N, C_out, H_out, W_out)``.

    Raises:
        AssertionError: ``bias`` is set (mmcv's deform_conv2d has none).
        ValueError: ``input``'s channels do not match ``weight`` and ``groups``, or ``offset``'s
            channels do not match ``deform_groups`` and the kernel size.
    """
    assert not bias, "deform_conv2d has no bias (as in mmcv); add one after it"
    _check_groups(input, offset, weight, groups, deform_groups)
    offset = mmcv_offset_gradient(offset.type_as(input), input, weight, stride, padding, dilation)
    return torchvision.ops.deform_conv2d(
        input,
        offset,
        weight.type_as(input),
        None,
        _pair(stride),
        _pair(padding),
        _pair(dilation),
    )


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


class DeformConv2d(nn.Module):
    """Deformable 2D convolution layer; the offsets are an input of :meth:`forward`.

    Args:
        in_channels: Input channels.
        out_channels: Output channels.
        kernel_size: Kernel size.
        stride: Stride.
        padding: Zero padding.
        dilation: Dilation.
        groups: Convolution groups.
        deform_groups: Groups of input channels sharing one offset field.
        bias: Must be False (mmcv's DeformConv2d has no bias).
        im2col_step: Accepted for compatibility.

    Raises:
        AssertionError: ``bias`` is set, or the channels are not multiples of ``groups`` (as
            mmcv).
        ValueError: At ``forward``, the channel checks of :func:`deform_conv2d`.
    """

    @deprecated_api_warning({"deformable_groups": "deform_groups"}, cls_name="DeformConv2d")
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: IntPair,
        stride: IntPair = 1,
        padding: IntPair = 0,
        dilation: IntPair = 1,
        groups: int = 1,
        deform_groups: int = 1,
        bias: bool = False,
        im2col_step: int = 32,
    ) -> None:
        super().__init__()
        assert not bias, f"bias={bias} is not supported in DeformConv2d."
        assert in_channels % groups == 0, f"in_channels {in_channels} not divisible by {groups}"
        assert out_channels % groups == 0, f"out_channels {out_channels} not divisible by {groups}"
        _set_conv_attributes(
            self,
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            deform_groups,
        )
        self.im2col_step = im2col_step
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Kaiming-uniform weight, as mmcv."""
        nn.init.kaiming_uniform_(self.weight, nonlinearity="relu")

    def forward(self, x: Tensor, offset: Tensor) -> Tensor:
        """Convolve ``x`` sampling at ``offset``.

        Args:
            x: ``(N, C_in, H, W)``.
            offset: ``(N, deform_groups * 2 * kh * kw, H_out, W_out)``, ``y, x`` per tap.

        Returns:
            ``(N, C_out, H_out, W_out)``.
        """
        # As mmcv: an input smaller than the kernel is zero-padded on the bottom/right and
        # the output cropped back.
        pad_h = max(self.kernel_size[0] - x.size(2), 0)
        pad_w = max(self.kernel_size[1] - x.size(3), 0)
        if pad_h or pad_w:
            x = F.pad(x, (0, pad_w, 0, pad_h))
            offset = F.pad(offset, (0, pad_w, 0, pad_h))
        out = self._deform_conv(x, offset)
        if pad_h or pad_w:
            out = out[:, :, : out.size(2) - pad_h, : out.size(3) - pad_w].contiguous()
        return out

    def _deform_conv(self, x: Tensor, offset: Tensor) -> Tensor:
        # The op with this layer's settings; the Pack layer calls it without forward's
        # small-input padding, as mmcv's does.
        return deform_conv2d(
            x,
            offset,
            self.weight,
            self.stride,
            self.padding,
            self.dilation,
            self.groups,
            self.deform_groups,
            False,
            self.im2col_step,
        )

    def extra_repr(self) -> str:
        """The constructor arguments, for ``repr``."""
        return (
            f"in_channels={self.in_channels}, out_channels={self.out_channels}, "
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, groups={self.groups}, "
            f"deform_groups={self.deform_groups}, bias=False"
        )


@CONV_LAYERS.register_module("DCN")
class DeformConv2dPack(DeformConv2d):
    """A :class:`DeformConv2d` that predicts its own offsets, usable like ``nn.Conv2d``.

    The offsets come from ``conv_offset``, a plain convolution with this layer's kernel,
    stride, padding and dilation, initialised to zero (so it starts as a regular convolution).
    Registered as ``'DCN'`` in ``CONV_LAYERS``. Arguments as :class:`DeformConv2d`.

    Raises:
        AssertionError: As :class:`DeformConv2d` at construction.
        RuntimeError: At ``forward``, ``x`` does not have ``in_channels`` channels (torch's
            convolution of the offset layer names the shapes).
    """

    # mmcv's version 2 layout (``conv_offset`` inside the layer). mmcv's loader also renamed
    # version-1 keys (``<name>_offset.*``, beside the layer); PyTorch 2 hands a child only the
    # keys under its own prefix, so that rename cannot work there or here and is left out.
    _version = 2

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.conv_offset = _offset_conv(self, 2)  # y, x per tap
        self.init_offset()

    def init_offset(self) -> None:
        """Zero the offset conv: the layer starts as a regular convolution."""
        self.conv_offset.weight.data.zero_()
        self.conv_offset.bias.data.zero_()

    def forward(self, x: Tensor) -> Tensor:  # type: ignore[override]
        """Predict offsets from ``x`` and convolve.

        Args:
            x: ``(N, C_in, H, W)``.

        Returns:
            ``(N, C_out, H_out, W_out)``.
        """
        return self._deform_conv(x, self.conv_offset(x))


DeformConv2dFunction = op_function("DeformConv2dFunction", deform_conv2d, __name__)


def __getattr__(name: str) -> Any:
    # mmcv's module imports ModulatedDeformConv2dFunction from modulated_deform_conv, which
    # here imports this module: it is served on first access instead of at import time.
    if name == "ModulatedDeformConv2dFunction":
        from .modulated_deform_conv import ModulatedDeformConv2dFunction

        return ModulatedDeformConv2dFunction
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
