"""S2ANet's active rotating filter, as mmcv's ``active_rotated_filter``.

Copies each input filter tap to the positions ``indices`` gives for every rotation: the
scatter is inverted into one gather (``index_select``) over all taps and rotations, on any
device. The gradient of an input tap is the sum of the output gradients at its positions, as
mmcv's backward (for indices that permute the taps of each rotation, as ORN's do).
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._autograd import op_function

__all__ = ["ActiveRotatedFilterFunction", "active_rotated_filter"]


def active_rotated_filter(input: Tensor, indices: Tensor) -> Tensor:  # noqa: A002 (mmcv's name)
    """Rotate filters to every orientation.

    Args:
        input: Filters ``(out_planes, in_planes, num_orientations, H, W)``.
        indices: 1-based target positions ``(num_orientations, H, W, num_rotations)`` (integer)
            of each tap ``(o, h, w)`` within ``num_orientations * H * W``, per rotation.

    Returns:
        ``(out_planes * num_rotations, in_planes * num_orientations, H, W)``; positions no tap
        targets are 0.

    Raises:
        ValueError: Shapes that do not match, or an index outside ``[1, num_orientations * H * W]``.
        TypeError: ``indices`` is not an integer tensor.
    """
    if input.dim() != 5 or indices.dim() != 4 or indices.shape[:3] != input.shape[2:]:
        raise ValueError(
            "active_rotated_filter: input must be (out_planes, in_planes, O, H, W) and indices "
            f"(O, H, W, num_rotations); got {tuple(input.shape)} and {tuple(indices.shape)}"
        )
    if indices.is_floating_point() or indices.is_complex():
        raise TypeError(
            f"active_rotated_filter: indices must be an integer tensor, got {indices.dtype}"
        )
    out_planes, in_planes, orientations, height, width = input.shape
    rotations = indices.size(3)
    entries = orientations * height * width
    target = indices.to(device=input.device, dtype=torch.long).reshape(entries, rotations) - 1
    if target.numel() and (target.min() < 0 or target.max() >= entries):
        raise ValueError(
            f"active_rotated_filter: indices must be in [1, {entries}] (1-based positions)"
        )
    # Invert the scatter into a gather: source[pos, k] is the tap copied to position pos by
    # rotation k, or the appended zero tap where none is.
    rotation = torch.arange(rotations, device=input.device).expand(entries, rotations)
    source = torch.full((entries, rotations), entries, dtype=torch.long, device=input.device)
    source[target, rotation] = torch.arange(entries, device=input.device)[:, None].expand_as(target)
    taps = torch.cat(
        [
            input.reshape(out_planes * in_planes, entries),
            input.new_zeros(out_planes * in_planes, 1),
        ],
        1,
    )
    output = taps.index_select(1, source.reshape(-1)).view(
        out_planes, in_planes, entries, rotations
    )
    # (op, ip, entries, r) -> (op, r, ip, entries) -> (op * r, ip * O, H, W)
    return output.permute(0, 3, 1, 2).reshape(
        out_planes * rotations, in_planes * orientations, height, width
    )


ActiveRotatedFilterFunction = op_function(
    "ActiveRotatedFilterFunction", active_rotated_filter, __name__
)
