"""``tensor2imgs``: turn a normalised NCHW batch back into displayable uint8 images.

torch is imported inside the function, so ``mmpar.image`` imports without it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .photometric import imdenormalize


def __getattr__(name: str) -> Any:
    """Serve the module attribute ``torch`` of mmcv's misc, imported on first access."""
    if name == "torch":
        import torch

        return torch
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def tensor2imgs(
    tensor: Any, mean: tuple | None = None, std: tuple | None = None, to_rgb: bool = True
) -> list[np.ndarray]:
    """Convert a batch ``(N, C, H, W)`` (C is 3 or 1) into a list of ``(H, W, C)`` uint8 images.

    Args:
        tensor: A 4-D ``torch.Tensor``.
        mean: Per-channel mean used to normalise; default zeros.
        std: Per-channel standard deviation used to normalise; default ones.
        to_rgb: The batch was converted to RGB when normalised: convert back to BGR. Must be
            False for one channel.

    Returns:
        One contiguous uint8 image per sample (values cast, not clipped, as in mmcv).

    Raises:
        AssertionError: ``tensor`` is not a 4-D tensor with 1 or 3 channels, or ``mean`` /
            ``std`` do not give one value per channel, or ``to_rgb`` is set for one channel
            (as mmcv).
    """
    import torch

    assert torch.is_tensor(tensor) and tensor.ndim == 4, "tensor must be a 4-D torch.Tensor"
    channels = tensor.size(1)
    assert channels in (1, 3), f"tensor must have 1 or 3 channels, but has {channels}"
    mean = (0,) * channels if mean is None else mean
    std = (1,) * channels if std is None else std
    assert (channels == len(mean) == len(std) == 3) or (
        channels == len(mean) == len(std) == 1 and not to_rgb
    ), "mean and std need one value per channel, and to_rgb must be False for one channel"
    mean = np.array(mean, dtype=np.float32)
    std = np.array(std, dtype=np.float32)
    images = []
    for sample in tensor:
        hwc = sample.detach().cpu().numpy().transpose(1, 2, 0)
        img = imdenormalize(hwc, mean, std, to_bgr=to_rgb).astype(np.uint8)
        images.append(np.ascontiguousarray(img))
    return images
