"""mmcv 1.x's ``mmcv.ops.psa_mask``: the point-wise attention mask of PSANet, as one copy.

For every feature position (h, w), the ``mask_size`` window of input channels centred there is
copied to the positions of the feature map it covers; the rest of the (H*W)-long attention
vector is zero. ``'collect'`` writes position p's weight for (h, w) to output channel p at
(h, w); ``'distribute'`` writes it to output channel ``h * W + w`` at position p.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn.modules.utils import _pair

from ._autograd import op_function

__all__ = ["PSAMask", "PSAMaskFunction", "psa_mask"]

_PSA_TYPES = {"collect": 0, "distribute": 1}


def _diagonal_view(buffer: Tensor, distribute: bool, mask_hw: tuple[int, int]) -> Tensor:
    """The cells of ``buffer`` that mask cell (mh, mw) of position (h, w) lands on.

    ``buffer`` is the output padded by the mask's reach: ``(N, H + mh - 1, W + mw - 1, H, W)``
    for collect (target position first), ``(N, H, W, H + mh - 1, W + mw - 1)`` for
    distribute. Cell (mh, mw) of the window at (h, w) covers padded target (h + mh, w + mw),
    so the view ``(N, mh, mw, H, W)`` is a strided diagonal of it: no index tensors.
    """
    s = buffer.stride()
    n, h, w = buffer.size(0), buffer.size(-2), buffer.size(-1)
    if distribute:
        h, w = buffer.size(1), buffer.size(2)
        strides = (s[0], s[3], s[4], s[1] + s[3], s[2] + s[4])
    else:
        strides = (s[0], s[1], s[2], s[1] + s[3], s[2] + s[4])
    return buffer.as_strided((n, *mask_hw, h, w), strides)


def _padded_shape(n: int, h: int, w: int, mask_hw: tuple[int, int], distribute: bool) -> tuple:
    padded = (h + mask_hw[0] - 1, w + mask_hw[1] - 1)
    return (n, h, w, *padded) if distribute else (n, *padded, h, w)


def _unpad(buffer: Tensor, h: int, w: int, mask_hw: tuple[int, int], distribute: bool) -> Tensor:
    top, left = (mask_hw[0] - 1) // 2, (mask_hw[1] - 1) // 2
    if distribute:
        return buffer[:, :, :, top : top + h, left : left + w]
    return buffer[:, top : top + h, left : left + w]


class _PSAMaskFunction(torch.autograd.Function):
    """Both directions are one copy between the input and the diagonal view of the output."""

    @staticmethod
    def forward(ctx, input: Tensor, mask_hw: tuple[int, int], distribute: bool) -> Tensor:  # type: ignore[override]  # noqa: A002, E501
        n, _, h, w = input.shape
        ctx.shape = (n, h, w, mask_hw, distribute)
        buffer = input.new_zeros(_padded_shape(n, h, w, mask_hw, distribute))
        _diagonal_view(buffer, distribute, mask_hw).copy_(input.view(n, *mask_hw, h, w))
        return _unpad(buffer, h, w, mask_hw, distribute).reshape(n, h * w, h, w)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None, None]:  # type: ignore[override]
        n, h, w, mask_hw, distribute = ctx.shape
        buffer = grad.new_zeros(_padded_shape(n, h, w, mask_hw, distribute))
        _unpad(buffer, h, w, mask_hw, distribute).copy_(grad.reshape(n, h, w, h, w))
        view = _diagonal_view(buffer, distribute, mask_hw)
        return view.reshape(n, mask_hw[0] * mask_hw[1], h, w), None, None


def psa_mask(input: Tensor, psa_type: int | str, mask_size: int | tuple) -> Tensor:
    """Spread each position's window of mask weights over the whole feature map.

    Args:
        input: Mask weights, shape (N, mask_h * mask_w, H, W).
        psa_type: ``'collect'`` (or 0) or ``'distribute'`` (or 1).
        mask_size: (mask_h, mask_w), or one int for both.

    Returns:
        The attention maps, shape (N, H * W, H, W).
    """
    if isinstance(psa_type, str):
        psa_type = _PSA_TYPES[psa_type]
    h_mask, w_mask = _pair(mask_size)
    n, channels, h_feature, w_feature = input.shape
    assert channels == h_mask * w_mask, (
        f"input has {channels} channels, mask_size {(h_mask, w_mask)} needs {h_mask * w_mask}"
    )
    return _PSAMaskFunction.apply(input.contiguous(), (h_mask, w_mask), psa_type == 1)


class PSAMask(nn.Module):
    """The PSANet mask op as a module.

    Args:
        psa_type: ``'collect'`` or ``'distribute'``.
        mask_size: (mask_h, mask_w) of the input's window, or one int for both.

    Raises:
        AssertionError: ``psa_type`` is not ``'collect'`` or ``'distribute'``; at ``forward``,
            ``input``'s channels are not ``mask_h * mask_w`` (as mmcv).
    """

    def __init__(self, psa_type: str, mask_size: int | tuple | None = None) -> None:
        super().__init__()
        assert psa_type in _PSA_TYPES, f"psa_type must be one of {list(_PSA_TYPES)}"
        self.psa_type_enum = _PSA_TYPES[psa_type]
        self.mask_size = mask_size
        self.psa_type = psa_type

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`psa_mask` with this layer's type and mask size."""
        return psa_mask(input, self.psa_type_enum, self.mask_size)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(psa_type={self.psa_type}, mask_size={self.mask_size})"


PSAMaskFunction = op_function("PSAMaskFunction", psa_mask, __name__)
