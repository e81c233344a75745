"""Sparse convolution layers of mmcv (mmcv.ops.sparse_conv), on PyTorch tensor ops.

The weight has mmcv's layout ``(*kernel_size, in_channels, out_channels)`` and name, so
checkpoints of mmcv's (and spconv 1.x's) layers load unchanged. The layers are registered in
``CONV_LAYERS`` under mmcv's names.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch.nn import init
from torch.nn.parameter import Parameter

from mmpar.cnn import CONV_LAYERS

from . import sparse_functional as Fsp
from . import sparse_ops as ops
from .sparse_modules import SparseModule
from .sparse_ops import IntOrSeq, _per_dim
from .sparse_structure import SparseConvTensor

__all__ = [
    "SparseConv2d",
    "SparseConv3d",
    "SparseConv4d",
    "SparseConvTranspose2d",
    "SparseConvTranspose3d",
    "SparseConvolution",
    "SparseInverseConv2d",
    "SparseInverseConv3d",
    "SubMConv2d",
    "SubMConv3d",
    "SubMConv4d",
]


def _calculate_fan_in_and_fan_out_hwio(tensor: Tensor) -> tuple[int, int]:
    """Fan in and out of a weight laid out (*kernel, in, out)."""
    if tensor.dim() < 2:
        raise ValueError(
            "fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    if tensor.dim() == 2:
        return tensor.size(-2), tensor.size(-1)
    receptive = tensor[..., 0, 0].numel()
    return tensor.size(-2) * receptive, tensor.size(-1) * receptive


def check_sparse_input(module: SparseModule, input: Any) -> None:  # noqa: A002
    """Fail clearly when ``input`` is not a SparseConvTensor of ``module.ndim`` dimensions."""
    name = type(module).__name__
    assert isinstance(input, SparseConvTensor), (
        f"{name} takes a SparseConvTensor, got {type(input).__name__}"
    )
    if len(input.spatial_shape) != module.ndim or input.indices.size(-1) != module.ndim + 1:
        raise ValueError(
            f"{name} is {module.ndim}-D but got a SparseConvTensor with spatial shape "
            f"{list(input.spatial_shape)} and indices of {input.indices.size(-1)} columns"
        )


class SparseConvolution(SparseModule):
    """A sparse convolution over the active sites of a :class:`SparseConvTensor`, as mmcv's.

    Args:
        ndim: Spatial dimensions.
        in_channels: Input channels.
        out_channels: Output channels.
        kernel_size: Kernel size, one int or one per dimension (also stride, padding,
            dilation, output_padding).
        stride: Stride; with a stride other than 1, dilation must be 1.
        padding: Padding (submanifold layers use ``kernel_size // 2``).
        dilation: Dilation.
        groups: Must be 1.
        bias: Add a learned bias.
        subm: Submanifold: outputs at the input's active sites only.
        output_padding: Output padding of a transposed convolution.
        transposed: Transposed convolution.
        inverse: Inverse of the convolution stored under ``indice_key`` (its sites back).
        indice_key: Name to share a rulebook between layers of one tensor.
        fused_bn: A convolution with a batch norm folded in (see ``SparseSequential.fused``).

    Bad input: a non-SparseConvTensor fails an assertion (as in mmcv); indices outside the
    batch x spatial shape, or features not (N, in_channels), raise ValueError.
    """

    def __init__(
        self,
        ndim: int,
        in_channels: int,
        out_channels: int,
        kernel_size: IntOrSeq = 3,
        stride: IntOrSeq = 1,
        padding: IntOrSeq = 0,
        dilation: IntOrSeq = 1,
        groups: int = 1,
        bias: bool = True,
        subm: bool = False,
        output_padding: IntOrSeq = 0,
        transposed: bool = False,
        inverse: bool = False,
        indice_key: Any = None,
        fused_bn: bool = False,
    ) -> None:
        super().__init__()
        assert groups == 1, "sparse convolution supports groups=1 only"
        kernel_size, stride, padding, dilation, output_padding = (
            _per_dim(v, ndim) for v in (kernel_size, stride, padding, dilation, output_padding)
        )
        for d, s in zip(dilation, stride):
            assert s == 1 or d == 1, "don't support this."
        self.ndim = ndim
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.conv1x1 = np.prod(kernel_size) == 1
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.inverse = inverse
        self.output_padding = output_padding
        self.groups = groups
        self.subm = subm
        self.indice_key = indice_key
        self.fused_bn = fused_bn
        self.weight = Parameter(torch.empty(*kernel_size, in_channels, out_channels))
        if bias:
            self.bias = Parameter(torch.empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Initialise as mmcv: Kaiming-uniform weight, uniform bias in +-1/sqrt(fan_in)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = _calculate_fan_in_and_fan_out_hwio(self.weight)
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(self.bias, -bound, bound)

    def _output(
        self, source: SparseConvTensor, features: Tensor, indices: Tensor,
        spatial_shape: Sequence[int],
    ) -> SparseConvTensor:  # fmt: skip
        out = SparseConvTensor(features, indices, spatial_shape, source.batch_size)
        out.indice_dict = source.indice_dict
        out.grid = source.grid
        return out

    def _out_spatial_shape(self, spatial_shape: Sequence[int]) -> list[int]:
        if self.subm:
            return list(spatial_shape)
        if self.transposed:
            return ops.get_deconv_output_size(
                spatial_shape, self.kernel_size, self.stride, self.padding, self.dilation,
                self.output_padding,
            )  # fmt: skip
        return ops.get_conv_output_size(
            spatial_shape, self.kernel_size, self.stride, self.padding, self.dilation
        )

    def forward(self, input: SparseConvTensor) -> SparseConvTensor:  # noqa: A002
        """Convolve the active sites; returns a new SparseConvTensor sharing the rulebooks.

        Raises:
            AssertionError: ``input`` is not a SparseConvTensor (as mmcv).
            ValueError: ``input`` has another number of spatial dimensions than the layer, features
                not ``(N, in_channels)``, or an index outside the batch x spatial shape.
        """
        check_sparse_input(self, input)
        features, indices = input.features, input.indices
        if features.dim() != 2 or features.size(1) != self.in_channels:
            raise ValueError(
                f"{type(self).__name__}: features must be (N, {self.in_channels}), got "
                f"{tuple(features.shape)}"
            )
        out_spatial_shape = self._out_spatial_shape(input.spatial_shape)
        if self.conv1x1:
            out = features @ self.weight.view(self.in_channels, self.out_channels)
            if self.bias is not None:
                out = out + self.bias
            return self._output(input, out, indices, input.spatial_shape)
        data = input.find_indice_pair(self.indice_key)
        if self.inverse:
            assert data is not None, (
                f"{type(self).__name__}: no rulebook under indice_key={self.indice_key!r}; an "
                "inverse convolution needs the key of the convolution it inverts, run on the "
                "same tensor before it"
            )
            _, outids, indice_pairs, indice_pair_num, out_spatial_shape = data
            assert indice_pairs.shape[0] == np.prod(self.kernel_size), (
                "inverse conv must have same kernel size as its couple conv"
            )
        elif data is not None:
            outids, _, indice_pairs, indice_pair_num, _ = data
        else:
            outids, indice_pairs, indice_pair_num = ops.get_indice_pairs(
                indices, input.batch_size, input.spatial_shape, self.kernel_size, self.stride,
                self.padding, self.dilation, self.output_padding, self.subm, self.transposed,
                grid=input.grid,
            )  # fmt: skip
            input.indice_dict[self.indice_key] = (
                outids, indices, indice_pairs, indice_pair_num, input.spatial_shape
            )  # fmt: skip
        num_out = outids.shape[0]
        pairs = indice_pairs.to(features.device)
        if self.fused_bn:
            assert self.bias is not None, "a fused_bn convolution needs a bias"
            out = ops.fused_indice_conv(
                features, self.weight, self.bias, pairs, indice_pair_num, num_out,
                self.inverse, self.subm,
            )  # fmt: skip
        else:
            if self.subm:
                out = Fsp.indice_subm_conv(features, self.weight, pairs, indice_pair_num, num_out)
            elif self.inverse:
                out = Fsp.indice_inverse_conv(
                    features, self.weight, pairs, indice_pair_num, num_out
                )
            else:
                out = Fsp.indice_conv(features, self.weight, pairs, indice_pair_num, num_out)
            if self.bias is not None:
                out = out + self.bias
        return self._output(input, out, outids, out_spatial_shape)


def _layer(name: str, ndim: int, **fixed: Any) -> type:
    """Define and register mmcv's layer ``name``: a SparseConvolution of ``ndim`` dimensions."""

    def __init__(  # noqa: N807
        self: SparseConvolution,
        in_channels: int,
        out_channels: int,
        kernel_size: IntOrSeq,
        stride: IntOrSeq = 1,
        padding: IntOrSeq = 0,
        dilation: IntOrSeq = 1,
        groups: int = 1,
        bias: bool = True,
        indice_key: Any = None,
    ) -> None:
        SparseConvolution.__init__(
            self, ndim, in_channels, out_channels, kernel_size, stride, padding, dilation,
            groups, bias, indice_key=indice_key, **fixed,
        )  # fmt: skip

    kind = ", ".join(f"{k}={v}" for k, v in fixed.items()) or "regular"
    cls = type(name, (SparseConvolution,), {
        "__init__": __init__,
        "__module__": __name__,
        "__doc__": f"mmcv's {name}: a {ndim}-D sparse convolution ({kind}).",
    })  # fmt: skip
    return CONV_LAYERS.register_module(module=cls)


def _inverse_layer(name: str, ndim: int) -> type:
    """Define and register mmcv's inverse layer ``name`` (its own constructor signature)."""

    def __init__(  # noqa: N807
        self: SparseConvolution,
        in_channels: int,
        out_channels: int,
        kernel_size: IntOrSeq,
        indice_key: Any = None,
        bias: bool = True,
    ) -> None:
        SparseConvolution.__init__(
            self, ndim, in_channels, out_channels, kernel_size, bias=bias, inverse=True,
            indice_key=indice_key,
        )  # fmt: skip

    cls = type(name, (SparseConvolution,), {
        "__init__": __init__,
        "__module__": __name__,
        "__doc__": f"mmcv's {name}: the inverse of the {ndim}-D convolution under indice_key.",
    })  # fmt: skip
    return CONV_LAYERS.register_module(module=cls)


SparseConv2d = _layer("SparseConv2d", 2)
SparseConv3d = _layer("SparseConv3d", 3)
SparseConv4d = _layer("SparseConv4d", 4)
SparseConvTranspose2d = _layer("SparseConvTranspose2d", 2, transposed=True)
SparseConvTranspose3d = _layer("SparseConvTranspose3d", 3, transposed=True)
SparseInverseConv2d = _inverse_layer("SparseInverseConv2d", 2)
SparseInverseConv3d = _inverse_layer("SparseInverseConv3d", 3)
SubMConv2d = _layer("SubMConv2d", 2, subm=True)
SubMConv3d = _layer("SubMConv3d", 3, subm=True)
SubMConv4d = _layer("SubMConv4d", 4, subm=True)
