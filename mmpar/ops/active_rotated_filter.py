"""S2ANet's active rotating filter, as mmcv's ``active_rotated_filter``.

Copies each input filter tap to the positions ``indices`` gives for every rotation: one
scatter (``index_put``) over all taps and rotations, on any device. The gradient of an input
tap is the sum of the output gradients at its positions, as mmcv's backward.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["active_rotated_filter"]


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
    values = input.reshape(out_planes, in_planes, entries).permute(2, 0, 1)  # (entries, op, ip)
    rotation = torch.arange(rotations, device=input.device).expand(entries, rotations)
    output = input.new_zeros((rotations, entries, out_planes, in_planes))
    output = output.index_put(
        (rotation, target), values[:, None].expand(entries, rotations, out_planes, in_planes)
    )
    # (r, entries, op, ip) -> (op, r, ip, entries) -> (op * r, ip * O, H, W)
    return output.permute(2, 0, 3, 1).reshape(
        out_planes * rotations, in_planes * orientations, height, width
    )
