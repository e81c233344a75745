"""mmcv 1.x's ``mmcv.ops.masked_conv``: a convolution evaluated only where a mask is positive.

mmcv's kernel gathers the masked positions (im2col), multiplies, and scatters back into
zeros. The output equals a full convolution multiplied by ``mask > 0``, which is how it is
computed here: one dense convolution costs less on a CPU than gathering, and it is
differentiable (mmcv's op has no backward).
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.modules.utils import _pair

from ._autograd import op_function

__all__ = ["MaskedConv2d", "MaskedConv2dFunction", "masked_conv2d"]


def _masked_conv(
    features: Tensor,
    mask: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    padding: int | tuple,
    stride: int | tuple,
    dilation: int | tuple = 1,
    groups: int = 1,
) -> Tensor:
    assert mask.dim() == 3 and mask.size(0) == 1, "mask must have shape (1, H, W)"
    assert features.dim() == 4 and features.size(0) == 1, "features must have shape (1, C, H, W)"
    assert features.shape[2:] == mask.shape[1:], "features and mask must share (H, W)"
    if _pair(stride) != (1, 1):
        raise ValueError("masked_conv2d only supports stride 1")
    output = F.conv2d(features, weight, bias, 1, padding, dilation, groups)
    if output.shape[2:] != mask.shape[1:]:
        raise ValueError(
            f"the convolution's output size {tuple(output.shape[2:])} differs from the mask's "
            f"{tuple(mask.shape[1:])}: masked_conv2d needs a padding that keeps the size"
        )
    return output * (mask > 0).to(output.dtype).unsqueeze(1)


def masked_conv2d(
    features: Tensor,
    mask: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    padding: int | tuple = 0,
    stride: int | tuple = 1,
) -> Tensor:
    """Convolve ``features`` and keep the result only where ``mask > 0`` (zeros elsewhere).

    Args:
        features: Input of one image, shape (1, C, H, W).
        mask: Mask, shape (1, H, W).
        weight: Convolution weight, shape (C_out, C, kh, kw).
        bias: Bias, shape (C_out,), or None.
        padding: Zero padding; it must keep the size (H, W). Default: 0.
        stride: Must be 1. Default: 1.

    Returns:
        The masked output, shape (1, C_out, H, W).

    Raises:
        ValueError: ``stride`` is not 1, or the output size differs from the mask's.
    """
    return _masked_conv(features, mask, weight, bias, padding, stride)


class MaskedConv2d(nn.Conv2d):
    """A ``Conv2d`` that, given a mask, computes its output only where the mask is positive.

    Without a mask it is a plain ``Conv2d``. The arguments are ``nn.Conv2d``'s.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, ...],
        stride: int = 1,
        padding: int = 0,
        dilation: int = 1,
        groups: int = 1,
        bias: bool = True,
    ) -> None:
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias
        )

    def forward(self, input: Tensor, mask: Tensor | None = None) -> Tensor:
        """Convolve ``input`` (1, C, H, W), masked by ``mask`` (1, H, W) when given.

        Raises:
            ValueError: with a mask, the layer's stride is not 1 or its padding changes the
                size.
        """
        if mask is None:
            return super().forward(input)
        return _masked_conv(
            input,
            mask,
            self.weight,
            self.bias,
            self.padding,
            self.stride,
            self.dilation,
            self.groups,
        )


MaskedConv2dFunction = op_function("MaskedConv2dFunction", masked_conv2d, __name__)
