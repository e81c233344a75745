"""Deformable convolution (DCNv1) with mmcv's classes and state dict, on torchvision's kernel.

The offset layout is the same in both: per deformable group, ``2 * kh * kw`` channels ordered
``y0, x0, y1, x1, ...`` over the kernel positions in row-major order (mmcv's own MLU path hands
its offsets to torchvision unchanged).
"""

from __future__ import annotations

import torch.nn.functional as F
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

# mmcv's module imports it from modulated_deform_conv too.
from .modulated_deform_conv import ModulatedDeformConv2dFunction as ModulatedDeformConv2dFunction

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
