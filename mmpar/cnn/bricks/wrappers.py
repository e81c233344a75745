"""mmcv's empty-tensor wrappers of torch layers (``Conv2d``, ``Linear``, ``MaxPool2d``, ...).

mmcv wrapped these so that a batch of zero samples (a mask head with no positive RoI) gave an
empty output of the right shape on torch < 1.9. Every torch that mmpar supports does that
itself, with gradients for the parameters, so each wrapper is its torch class under mmcv's
name and registry entries: ``'Conv'`` and ``'Conv3d'`` (replacing torch's), ``'ConvTranspose2d'``
/ ``'deconv'`` and ``'ConvTranspose3d'`` / ``'deconv3d'`` (conv and upsample registries).
"""

from __future__ import annotations

from typing import Any, Union

import torch
from torch import nn

# The torch registrations of .conv must exist before the forced replacements below.
from . import conv as _conv  # noqa: F401
from .registry import CONV_LAYERS, UPSAMPLE_LAYERS

#: The installed torch's ``(major, minor)``, as mmcv computed it here.
TORCH_VERSION: tuple = tuple(int(part) for part in torch.__version__.split(".")[:2])


def obsolete_torch_version(torch_version: Union[tuple, str], version_threshold: tuple) -> bool:
    """Whether ``torch_version`` is at or below ``version_threshold`` (parrots counts as old)."""
    return torch_version == "parrots" or torch_version <= version_threshold


class NewEmptyTensorOp(torch.autograd.Function):
    """An empty tensor of a new shape whose backward is an empty gradient of the input's shape.

    Use as ``NewEmptyTensorOp.apply(x, new_shape)``.
    """

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, new_shape: tuple) -> torch.Tensor:
        """Return ``x.new_empty(new_shape)`` and remember ``x``'s shape."""
        ctx.shape = x.shape
        return x.new_empty(new_shape)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple:
        """Return an empty gradient of the input's shape (and None for ``new_shape``)."""
        return NewEmptyTensorOp.apply(grad, ctx.shape), None


@CONV_LAYERS.register_module("Conv", force=True)
class Conv2d(nn.Conv2d):
    """``nn.Conv2d`` (empty batches are native in torch >= 1.9); registered as ``'Conv'``."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Run the torch layer (mmcv names the input ``x``)."""
        return super().forward(x)


@CONV_LAYERS.register_module("Conv3d", force=True)
class Conv3d(nn.Conv3d):
    """``nn.Conv3d`` (empty batches are native); registered as ``'Conv3d'``."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Run the torch layer (mmcv names the input ``x``)."""
        return super().forward(x)


@CONV_LAYERS.register_module()
@CONV_LAYERS.register_module("deconv")
@UPSAMPLE_LAYERS.register_module("deconv", force=True)
class ConvTranspose2d(nn.ConvTranspose2d):
    """``nn.ConvTranspose2d``; registered as ``'ConvTranspose2d'`` and ``'deconv'``."""

    def forward(self, x: torch.Tensor, output_size: list[int] | None = None) -> torch.Tensor:
        """Run the torch layer (mmcv names the input ``x``; ``output_size`` is torch's)."""
        if output_size is None:  # mmcv calls torch's forward with the input alone
            return super().forward(x)
        return super().forward(x, output_size)


@CONV_LAYERS.register_module()
@CONV_LAYERS.register_module("deconv3d")
@UPSAMPLE_LAYERS.register_module("deconv3d", force=True)
class ConvTranspose3d(nn.ConvTranspose3d):
    """``nn.ConvTranspose3d``; registered as ``'ConvTranspose3d'`` and ``'deconv3d'``."""

    def forward(self, x: torch.Tensor, output_size: list[int] | None = None) -> torch.Tensor:
        """Run the torch layer (mmcv names the input ``x``; ``output_size`` is torch's)."""
        if output_size is None:  # mmcv calls torch's forward with the input alone
            return super().forward(x)
        return super().forward(x, output_size)


class MaxPool2d(nn.MaxPool2d):
    """``nn.MaxPool2d`` (empty batches are native)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Run the torch layer (mmcv names the input ``x``)."""
        return super().forward(x)


class MaxPool3d(nn.MaxPool3d):
    """``nn.MaxPool3d`` (empty batches are native)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Run the torch layer (mmcv names the input ``x``)."""
        return super().forward(x)


class Linear(nn.Linear):
    """``nn.Linear`` (empty batches are native)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Run the torch layer (mmcv names the input ``x``)."""
        return super().forward(x)


__all__ = [
    "TORCH_VERSION",
    "Conv2d",
    "Conv3d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "Linear",
    "MaxPool2d",
    "MaxPool3d",
    "NewEmptyTensorOp",
    "obsolete_torch_version",
]
