"""mmcv 1.x's ``mmcv.ops.tin_shift``: the temporal shift of the Temporal Interlacing Network.

The channels are split into groups; each group of each sample is moved along time by its own
integer shift, and frames shifted in from outside the clip are zero. (TIN's linear
interpolation between two integer shifts is done by the caller, e.g. mmaction2's
``linear_sampler``, with two calls of this op.)
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from ._autograd import op_function

__all__ = ["TINShift", "TINShiftFunction", "tin_shift"]


def tin_shift(input: Tensor, shift: Tensor) -> Tensor:
    """Shift each channel group of each sample along time.

    ``output[n, t, c] = input[n, t - shift[n, g], c]`` (zero when out of range), where
    ``g = c // (C // G)`` is the channel's group.

    Args:
        input: Features, shape (N, T, C, HW).
        shift: Integer shift of each group, shape (N, G); C must be a multiple of G.

    Returns:
        The shifted features, shape (N, T, C, HW).

    Raises:
        ValueError: the batch sizes differ, or C is not a positive multiple of G.
    """
    if input.size(0) != shift.size(0):
        raise ValueError(
            "the first (batch) dimension of input and shift must match, got "
            f"{input.size(0)} and {shift.size(0)}"
        )
    n, t, c, hw = input.shape
    groups = shift.size(1)
    if c // groups <= 0 or c % groups != 0:
        raise ValueError(f"C must be a multiple of the number of groups, got C={c} and {groups}")
    # Shift per channel: (N, C); then the source frame of every output frame: (N, T, C).
    channel_shift = shift.long().repeat_interleave(c // groups, dim=1)
    src = torch.arange(t, device=input.device).view(1, t, 1) - channel_shift.unsqueeze(1)
    valid = (src >= 0) & (src < t)
    index = src.clamp(0, t - 1).unsqueeze(-1).expand(n, t, c, hw)
    shifted = torch.gather(input, 1, index)
    return shifted.masked_fill(~valid.unsqueeze(-1), 0)


class TINShift(nn.Module):
    """Temporal interlace shift (`TIN <https://arxiv.org/abs/2001.06499>`_) as a module.

    Raises:
        ValueError: At ``forward``, the batch sizes of ``input`` and ``shift`` differ, or C is not
            a positive multiple of the number of groups.
    """

    def forward(self, input: Tensor, shift: Tensor) -> Tensor:
        """Apply :func:`tin_shift`.

        Args:
            input: Features, shape (N, num_segments, C, HW).
            shift: Integer shift per channel group, shape (N, G).

        Returns:
            The shifted features.
        """
        return tin_shift(input, shift)


TINShiftFunction = op_function("TINShiftFunction", tin_shift, __name__)
