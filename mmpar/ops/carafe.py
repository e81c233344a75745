"""mmcv 1.x's ``mmcv.ops.carafe``: content-aware reassembly of features (CARAFE), in PyTorch.

Output pixel (y, x) of an upsampling by ``s`` is a weighted sum over the ``k x k`` window of
the input centred at ``(y // s, x // s)`` (zero outside the map), with the weights of its own
mask channels: channel group ``g`` uses mask channels ``g*k*k .. (g+1)*k*k - 1``, in
row-major window order. mmcv's two CUDA kernels (``carafe`` and ``carafe_naive``) compute the
same function; here both are one ``unfold``.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from mmpar.cnn.bricks.registry import UPSAMPLE_LAYERS
from mmpar.runner.model_setup.weight_init import normal_init, xavier_init

from ._autograd import op_function

__all__ = [
    "CARAFE",
    "CARAFEFunction",
    "CARAFENaive",
    "CARAFENaiveFunction",
    "CARAFEPack",
    "carafe",
    "carafe_naive",
]


def carafe(
    features: Tensor, masks: Tensor, kernel_size: int, group_size: int, scale_factor: int
) -> Tensor:
    """Reassemble ``features`` with per-pixel kernels ``masks``.

    Args:
        features: Input, shape (N, C, H, W); C must be a multiple of ``group_size``.
        masks: Reassembly kernels, shape (N, kernel_size**2 * group_size, H * s, W * s).
        kernel_size: Odd window size k.
        group_size: Channel groups sharing one kernel.
        scale_factor: Upsampling ratio s (an integer >= 1).

    Returns:
        The upsampled features, shape (N, C, H * s, W * s).

    Raises:
        AssertionError: ``scale_factor`` < 1, an even ``kernel_size``, channels not a multiple
            of ``group_size``, or ``masks`` not ``(N, kernel_size**2 * group_size, H * s, W * s)``
            (as mmcv).
    """
    n, c, h, w = features.shape
    k, g, s = kernel_size, group_size, scale_factor
    assert s >= 1
    assert masks.size(1) == k * k * g, "masks must have kernel_size**2 * group_size channels"
    assert masks.size(-1) == w * s and masks.size(-2) == h * s, "masks must be the output size"
    assert c % g == 0, "the channels must be a multiple of group_size"
    assert (k - 1) % 2 == 0 and k >= 1, "kernel_size must be odd"
    # (N, C*k*k, H*W): every input pixel's zero-padded window.
    windows = F.unfold(features, k, padding=(k - 1) // 2).view(n, c, k * k, h, w)
    # Each output pixel reads the window of the input pixel it falls in.
    windows = windows.repeat_interleave(s, dim=3).repeat_interleave(s, dim=4)
    windows = windows.view(n, g, c // g, k * k, h * s, w * s)
    kernels = masks.view(n, g, 1, k * k, h * s, w * s)
    return (windows * kernels).sum(3).view(n, c, h * s, w * s)


# mmcv's naive CUDA kernel computes the same function as its fast one.
carafe_naive = carafe


class _CARAFEModule(nn.Module):
    """The settings shared by :class:`CARAFENaive` and :class:`CARAFE`."""

    def __init__(self, kernel_size: int, group_size: int, scale_factor: int) -> None:
        super().__init__()
        assert isinstance(kernel_size, int)
        assert isinstance(group_size, int)
        assert isinstance(scale_factor, int)
        self.kernel_size = kernel_size
        self.group_size = group_size
        self.scale_factor = scale_factor

    def forward(self, features: Tensor, masks: Tensor) -> Tensor:
        """Reassemble ``features`` with ``masks`` (see :func:`carafe`).

        Raises:
            AssertionError: The shape checks of :func:`carafe` (and, at construction, a
                ``kernel_size``, ``group_size`` or ``scale_factor`` that is not an int).
        """
        return carafe(features, masks, self.kernel_size, self.group_size, self.scale_factor)


class CARAFENaive(_CARAFEModule):
    """:func:`carafe_naive` as a module.

    Args:
        kernel_size: Reassembly window size (odd).
        group_size: Channel groups sharing one kernel.
        scale_factor: Upsampling ratio.
    """


class CARAFE(_CARAFEModule):
    """:func:`carafe` as a module (`CARAFE <https://arxiv.org/abs/1905.02188>`_).

    Args:
        kernel_size: Reassembly window size (odd).
        group_size: Channel groups sharing one kernel.
        scale_factor: Upsampling ratio.
    """


@UPSAMPLE_LAYERS.register_module(name="carafe")
class CARAFEPack(nn.Module):
    """The CARAFE upsampler: channel compressor, content encoder and the CARAFE op.

    The content encoder predicts the reassembly kernels from the compressed input.

    Args:
        channels: Input channels.
        scale_factor: Upsampling ratio.
        up_kernel: Reassembly window size. Default: 5.
        up_group: Channel groups of the reassembly. Default: 1.
        encoder_kernel: Kernel size of the content encoder. Default: 3.
        encoder_dilation: Dilation of the content encoder. Default: 1.
        compressed_channels: Output channels of the compressor. Default: 64.

    Raises:
        AssertionError: At ``forward``, the shape checks of :func:`carafe` (``channels`` must
            be a multiple of ``up_group``).
        RuntimeError: At ``forward``, ``x`` does not have ``channels`` channels (torch's
            convolution names the shapes).
    """

    def __init__(
        self,
        channels: int,
        scale_factor: int,
        up_kernel: int = 5,
        up_group: int = 1,
        encoder_kernel: int = 3,
        encoder_dilation: int = 1,
        compressed_channels: int = 64,
    ) -> None:
        super().__init__()
        self.channels = channels
        self.scale_factor = scale_factor
        self.up_kernel = up_kernel
        self.up_group = up_group
        self.encoder_kernel = encoder_kernel
        self.encoder_dilation = encoder_dilation
        self.compressed_channels = compressed_channels
        self.channel_compressor = nn.Conv2d(channels, compressed_channels, 1)
        self.content_encoder = nn.Conv2d(
            compressed_channels,
            up_kernel * up_kernel * up_group * scale_factor * scale_factor,
            encoder_kernel,
            padding=int((encoder_kernel - 1) * encoder_dilation / 2),
            dilation=encoder_dilation,
            groups=1,
        )
        self.init_weights()

    def init_weights(self) -> None:
        """Xavier-uniform convolutions; the encoder N(0, 0.001) so the kernels start flat."""
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                xavier_init(m, distribution="uniform")
        normal_init(self.content_encoder, std=0.001)

    def kernel_normalizer(self, mask: Tensor) -> Tensor:
        """Rearrange the encoder output to full resolution and softmax each k*k kernel."""
        mask = F.pixel_shuffle(mask, self.scale_factor)
        n, mask_c, h, w = mask.shape
        groups = mask_c // (self.up_kernel**2)
        mask = F.softmax(mask.view(n, groups, -1, h, w), dim=2, dtype=mask.dtype)
        return mask.view(n, mask_c, h, w).contiguous()

    def feature_reassemble(self, x: Tensor, mask: Tensor) -> Tensor:
        """Apply :func:`carafe` with this layer's settings."""
        return carafe(x, mask, self.up_kernel, self.up_group, self.scale_factor)

    def forward(self, x: Tensor) -> Tensor:
        """Upsample ``x`` (N, C, H, W) to (N, C, H * s, W * s)."""
        mask = self.kernel_normalizer(self.content_encoder(self.channel_compressor(x)))
        return self.feature_reassemble(x, mask)


CARAFENaiveFunction = op_function("CARAFENaiveFunction", carafe_naive, __name__)


CARAFEFunction = op_function("CARAFEFunction", carafe, __name__)
