"""Modulated deformable convolution (DCNv2) with mmcv's classes and state dict.

Runs torchvision's ``deform_conv2d`` with its ``mask`` argument. The Pack layer splits its
``conv_offset`` output as mmcv does: three equal chunks ``o1, o2, m``; the offsets are
``cat(o1, o2)`` and the mask ``sigmoid(m)``, so mmcv-trained ``conv_offset`` weights mean the
same here.
"""

from __future__ import annotations

import math

import torch
import torchvision
from torch import Tensor, nn
from torch.nn.modules.utils import _pair

from mmpar.cnn import CONV_LAYERS
from mmpar.cnn.types import IntPair

# IS_MLU_AVAILABLE, digit_version, print_log: mmcv's module has them too (from mmcv.utils).
from mmpar.utils import IS_MLU_AVAILABLE, deprecated_api_warning, digit_version, print_log

from ._autograd import op_function
from ._deform_common import (
    _check_groups,
    _offset_conv,
    _set_conv_attributes,
    mmcv_offset_gradient,
)

__all__ = [
    "IS_MLU_AVAILABLE",
    "ModulatedDeformConv2d",
    "ModulatedDeformConv2dFunction",
    "ModulatedDeformConv2dPack",
    "digit_version",
    "modulated_deform_conv2d",
    "print_log",
]


def modulated_deform_conv2d(
    input: Tensor,  # noqa: A002 (mmcv's argument name)
    offset: Tensor,
    mask: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntPair = 1,
    padding: IntPair = 0,
    dilation: IntPair = 1,
    groups: int = 1,
    deform_groups: int = 1,
) -> Tensor:
    """Deformable convolution whose taps are also scaled by a learned ``mask`` (DCNv2).

    Args:
        input: Features ``(N, C_in, H, W)``.
        offset: ``(N, deform_groups * 2 * kh * kw, H_out, W_out)``, ``y, x`` per tap.
        mask: ``(N, deform_groups * kh * kw, H_out, W_out)``, one factor per tap.
        weight: ``(C_out, C_in // groups, kh, kw)``.
        bias: ``(C_out,)`` or None.
        stride: As for :class:`torch.nn.Conv2d`.
        padding: As for :class:`torch.nn.Conv2d`.
        dilation: As for :class:`torch.nn.Conv2d`.
        groups: Convolution groups.
        deform_groups: Groups of input channels sharing one offset field and mask.

    Returns:
        ``(N, C_out, H_out, W_out)``.

    Raises:
        ValueError: ``input`` is not 4-D, its channels do not match ``weight`` and ``groups``, or
            ``offset``'s channels do not match ``deform_groups`` and the kernel size.
    """
    if input.dim() != 4:
        raise ValueError(f"Expected 4D tensor as input, got {input.dim()}D tensor instead.")
    _check_groups(input, offset, weight, groups, deform_groups)
    offset = mmcv_offset_gradient(offset.type_as(input), input, weight, stride, padding, dilation)
    return torchvision.ops.deform_conv2d(
        input,
        offset,
        weight.type_as(input),
        None if bias is None else bias.type_as(input),
        _pair(stride),
        _pair(padding),
        _pair(dilation),
        mask.type_as(input),
    )


class ModulatedDeformConv2d(nn.Module):
    """DCNv2 layer; the offsets and mask are inputs of :meth:`forward`.

    Args:
        in_channels: Input channels.
        out_channels: Output channels.
        kernel_size: Kernel size.
        stride: Stride.
        padding: Zero padding.
        dilation: Dilation.
        groups: Convolution groups.
        deform_groups: Groups of input channels sharing one offset field and mask.
        bias: Learn a bias (a truthy value such as ``'auto'`` counts as True, as in mmcv).

    Raises:
        ValueError: At ``forward``, the checks of :func:`modulated_deform_conv2d`.
    """

    @deprecated_api_warning(
        {"deformable_groups": "deform_groups"}, cls_name="ModulatedDeformConv2d"
    )
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
        bias: bool | str = True,
    ) -> None:
        super().__init__()
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
        if bias:
            self.bias = nn.Parameter(torch.empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.init_weights()

    def init_weights(self) -> None:
        """Uniform weight in ``+-1/sqrt(fan_in)`` and zero bias, as mmcv."""
        bound = 1.0 / math.sqrt(self.in_channels * self.kernel_size[0] * self.kernel_size[1])
        self.weight.data.uniform_(-bound, bound)
        if self.bias is not None:
            self.bias.data.zero_()

    def forward(self, x: Tensor, offset: Tensor, mask: Tensor) -> Tensor:
        """Convolve ``x`` sampling at ``offset``, each tap scaled by ``mask``.

        Args:
            x: ``(N, C_in, H, W)``.
            offset: ``(N, deform_groups * 2 * kh * kw, H_out, W_out)``.
            mask: ``(N, deform_groups * kh * kw, H_out, W_out)``.

        Returns:
            ``(N, C_out, H_out, W_out)``.
        """
        return modulated_deform_conv2d(
            x,
            offset,
            mask,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            self.dilation,
            self.groups,
            self.deform_groups,
        )


@CONV_LAYERS.register_module("DCNv2")
class ModulatedDeformConv2dPack(ModulatedDeformConv2d):
    """A :class:`ModulatedDeformConv2d` that predicts its own offsets and mask.

    ``conv_offset`` (zero-initialised, so the layer starts as a regular convolution with every
    mask at 0.5) gives ``3 * deform_groups * kh * kw`` channels, split as the module docstring
    says. Registered as ``'DCNv2'`` in ``CONV_LAYERS``. Arguments as
    :class:`ModulatedDeformConv2d`.

    Raises:
        RuntimeError: At ``forward``, ``x`` does not have ``in_channels`` channels (torch's
            convolution of the offset layer names the shapes).
    """

    _version = 2  # mmcv's layout version (see DeformConv2dPack)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.conv_offset = _offset_conv(self, 3)  # y, x and the mask per tap
        self.init_weights()

    def init_weights(self) -> None:
        """The main weights as the parent; the offset conv zero."""
        super().init_weights()
        if hasattr(self, "conv_offset"):
            self.conv_offset.weight.data.zero_()
            self.conv_offset.bias.data.zero_()

    def forward(self, x: Tensor) -> Tensor:  # type: ignore[override]
        """Predict offsets and mask from ``x`` and convolve.

        Args:
            x: ``(N, C_in, H, W)``.

        Returns:
            ``(N, C_out, H_out, W_out)``.
        """
        o1, o2, mask = torch.chunk(self.conv_offset(x), 3, dim=1)
        return super().forward(x, torch.cat((o1, o2), dim=1), torch.sigmoid(mask))


ModulatedDeformConv2dFunction = op_function(
    "ModulatedDeformConv2dFunction", modulated_deform_conv2d, __name__
)
