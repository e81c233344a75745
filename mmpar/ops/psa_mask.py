"""mmcv 1.x's ``mmcv.ops.psa_mask``: the point-wise attention mask of PSANet, as an index copy.

For every feature position (h, w), the ``mask_size`` window of input channels centred there is
copied to the positions of the feature map it covers; the rest of the (H*W)-long attention
vector is zero. ``'collect'`` writes position p's weight for (h, w) to output channel p at
(h, w); ``'distribute'`` writes it to output channel ``h * W + w`` at position p.
"""

from __future__ import annotations

from functools import lru_cache

import torch
from torch import Tensor, nn
from torch.nn.modules.utils import _pair

__all__ = ["PSAMask", "psa_mask"]

_PSA_TYPES = {"collect": 0, "distribute": 1}


@lru_cache(maxsize=32)
def _copy_indices(
    h_feature: int, w_feature: int, h_mask: int, w_mask: int, distribute: bool
) -> tuple[Tensor, Tensor]:
    """Flat (source, destination) indices within one sample (computed once per shape)."""
    half_h, half_w = (h_mask - 1) // 2, (w_mask - 1) // 2
    num_pos = h_feature * w_feature
    mh, mw, h, w = torch.meshgrid(
        torch.arange(h_mask),
        torch.arange(w_mask),
        torch.arange(h_feature),
        torch.arange(w_feature),
        indexing="ij",
    )
    # The feature position that mask cell (mh, mw) of the window centred at (h, w) covers.
    th = mh + h - half_h
    tw = mw + w - half_w
    valid = (th >= 0) & (th < h_feature) & (tw >= 0) & (tw < w_feature)
    pos = (h * w_feature + w)[valid]
    target = (th * w_feature + tw)[valid]
    source = (mh * w_mask + mw)[valid] * num_pos + pos
    dest = pos * num_pos + target if distribute else target * num_pos + pos
    return source, dest


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
    source, dest = _copy_indices(h_feature, w_feature, h_mask, w_mask, psa_type == 1)
    source, dest = source.to(input.device), dest.to(input.device)
    num_pos = h_feature * w_feature
    output = input.new_zeros(n, num_pos * num_pos)
    output[:, dest] = input.reshape(n, -1)[:, source]
    return output.view(n, num_pos, h_feature, w_feature)


class PSAMask(nn.Module):
    """The PSANet mask op as a module.

    Args:
        psa_type: ``'collect'`` or ``'distribute'``.
        mask_size: (mask_h, mask_w) of the input's window, or one int for both.
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
