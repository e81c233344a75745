"""Autograd functions of mmcv's sparse convolution and pooling (mmcv.ops.sparse_functional)."""

from __future__ import annotations

from typing import Any

from torch import Tensor
from torch.autograd import Function

from . import sparse_ops as ops

__all__ = [
    "SparseConvFunction",
    "SparseInverseConvFunction",
    "SparseMaxPoolFunction",
    "SubMConvFunction",
    "indice_conv",
    "indice_inverse_conv",
    "indice_maxpool",
    "indice_subm_conv",
]


class _IndiceConvFunction(Function):
    """Gather-GEMM-scatter convolution over a rulebook; differentiable in features and filters."""

    inverse = False
    subm = False

    @classmethod
    def forward(
        cls,
        ctx: Any,
        features: Tensor,
        filters: Tensor,
        indice_pairs: Tensor,
        indice_pair_num: Tensor,
        num_activate_out: int,
    ) -> Tensor:
        ctx.save_for_backward(indice_pairs, indice_pair_num, features, filters)
        return ops.indice_conv(
            features, filters, indice_pairs, indice_pair_num, num_activate_out,
            cls.inverse, cls.subm,
        )  # fmt: skip

    @classmethod
    def backward(cls, ctx: Any, grad_output: Tensor) -> tuple:
        indice_pairs, indice_pair_num, features, filters = ctx.saved_tensors
        input_bp, filters_bp = ops.indice_conv_backward(
            features, filters, grad_output.contiguous(), indice_pairs, indice_pair_num,
            cls.inverse, cls.subm,
        )  # fmt: skip
        return input_bp, filters_bp, None, None, None


class SparseConvFunction(_IndiceConvFunction):
    """Sparse convolution (SECOND, https://www.mdpi.com/1424-8220/18/10/3337)."""


class SparseInverseConvFunction(_IndiceConvFunction):
    """Inverse sparse convolution: the rulebook of its paired convolution, run backwards."""

    inverse = True


class SubMConvFunction(_IndiceConvFunction):
    """Submanifold sparse convolution: output sites are the input sites."""

    subm = True


class SparseMaxPoolFunction(Function):
    """Sparse max pooling over a rulebook."""

    @staticmethod
    def forward(
        ctx: Any,
        features: Tensor,
        indice_pairs: Tensor,
        indice_pair_num: Tensor,
        num_activate_out: int,
    ) -> Tensor:
        """Pool ``features`` into ``num_activate_out`` sites over the rulebook."""
        out = ops.indice_maxpool(features, indice_pairs, indice_pair_num, num_activate_out)
        ctx.save_for_backward(indice_pairs, indice_pair_num, features, out)
        return out

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> tuple:
        """Send each output's gradient to the inputs equal to its maximum."""
        indice_pairs, indice_pair_num, features, out = ctx.saved_tensors
        input_bp = ops.indice_maxpool_backward(
            features, out, grad_output, indice_pairs, indice_pair_num
        )
        return input_bp, None, None, None


indice_conv = SparseConvFunction.apply
indice_inverse_conv = SparseInverseConvFunction.apply
indice_subm_conv = SubMConvFunction.apply
indice_maxpool = SparseMaxPoolFunction.apply
