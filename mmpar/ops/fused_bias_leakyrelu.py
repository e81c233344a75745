"""StyleGAN2's bias + leaky ReLU + scale, in PyTorch (mmcv's own CPU path is PyTorch too).

``fused_bias_leakyrelu(x, b) = leaky_relu(x + b, negative_slope) * scale``, the bias added per
channel (dimension 1). mmcv fused the three steps in a CUDA kernel; here autograd does them.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._autograd import op_function

__all__ = [
    "FusedBiasLeakyReLU",
    "FusedBiasLeakyReLUFunction",
    "FusedBiasLeakyReLUFunctionBackward",
    "bias_leakyrelu_ref",
    "fused_bias_leakyrelu",
]


def fused_bias_leakyrelu(
    input: Tensor,  # noqa: A002 (mmcv's argument name)
    bias: Tensor | None,
    negative_slope: float = 0.2,
    scale: float = 2**0.5,
) -> Tensor:
    """Add ``bias`` per channel, apply leaky ReLU, multiply by ``scale``.

    Args:
        input: Features ``(N, C, ...)``.
        bias: ``(C,)``, or None for no bias.
        negative_slope: Slope of the negative part.
        scale: Output factor (``sqrt(2)`` keeps the variance, as in StyleGAN2).

    Returns:
        A tensor shaped as ``input``.

    Raises:
        AssertionError: ``scale`` is not positive, or ``bias`` is not ``(C,)`` (as mmcv).
    """
    assert scale > 0, "The scale should be greater than 0"
    if bias is not None:
        assert bias.ndim == 1 and bias.shape[0] == input.shape[1], "bias must be (C,)"
        input = input + bias.to(input.dtype).view(1, -1, *([1] * (input.ndim - 2)))
    out = F.leaky_relu(input, negative_slope)
    return out * scale if scale != 1 else out


class FusedBiasLeakyReLU(nn.Module):
    """:func:`fused_bias_leakyrelu` with a learned, zero-initialised ``bias`` (mmcv's name).

    Args:
        num_channels: Channels of the input.
        negative_slope: Slope of the negative part.
        scale: Output factor.

    Raises:
        AssertionError: At ``forward``, ``input`` does not have ``num_channels`` channels, or
            ``scale`` is not positive (as :func:`fused_bias_leakyrelu`).
    """

    def __init__(self, num_channels: int, negative_slope: float = 0.2, scale: float = 2**0.5):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(num_channels))
        self.negative_slope = negative_slope
        self.scale = scale

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """Apply the activation.

        Args:
            input: Features ``(N, C, ...)``.

        Returns:
            A tensor shaped as ``input``.
        """
        return fused_bias_leakyrelu(input, self.bias, self.negative_slope, self.scale)


#: mmcv's name for its PyTorch path of :func:`fused_bias_leakyrelu`.
bias_leakyrelu_ref = fused_bias_leakyrelu


FusedBiasLeakyReLUFunction = op_function(
    "FusedBiasLeakyReLUFunction", fused_bias_leakyrelu, __name__
)


def _leakyrelu_backward(
    grad_output: Tensor, out: Tensor, negative_slope: float, scale: float
) -> tuple[Tensor, Tensor]:
    # The activation's slope at each output (its sign is the input's), times the scale.
    slope = torch.where(out > 0, scale, negative_slope * scale).to(grad_output.dtype)
    grad_input = grad_output * slope
    grad_bias = grad_input.sum([0, *range(2, grad_output.ndim)])
    return grad_input, grad_bias


FusedBiasLeakyReLUFunctionBackward = op_function(
    "FusedBiasLeakyReLUFunctionBackward",
    _leakyrelu_backward,
    __name__,
    doc="""The backward of :func:`fused_bias_leakyrelu` as mmcv's autograd function.

    ``apply(grad_output, out, negative_slope, scale)`` gives ``(grad_input, grad_bias)``, the
    gradients of the op's input and bias given ``out``, the op's output; it is itself
    differentiable in ``grad_output`` (double backward).
    """,
)
