"""Sparse max pooling layers of mmcv (mmcv.ops.sparse_pool)."""

from __future__ import annotations

from .sparse_conv import check_sparse_input
from .sparse_functional import indice_maxpool
from .sparse_modules import SparseModule
from .sparse_ops import IntOrSeq, _per_dim, get_conv_output_size, get_indice_pairs
from .sparse_structure import SparseConvTensor

__all__ = ["SparseMaxPool", "SparseMaxPool2d", "SparseMaxPool3d"]


class SparseMaxPool(SparseModule):
    """Max pooling over the active sites of a :class:`SparseConvTensor`, as mmcv's.

    As mmcv's kernel, each output starts from 0, so pooled values are never negative.

    Args:
        ndim: Spatial dimensions.
        kernel_size: Window size, one int or one per dimension (also stride, padding, dilation).
        stride: Stride.
        padding: Padding.
        dilation: Dilation.
        subm: Pool onto the input's own sites.
    """

    def __init__(
        self,
        ndim: int,
        kernel_size: IntOrSeq,
        stride: IntOrSeq = 1,
        padding: IntOrSeq = 0,
        dilation: IntOrSeq = 1,
        subm: bool = False,
    ) -> None:
        super().__init__()
        self.ndim = ndim
        self.kernel_size = _per_dim(kernel_size, ndim)
        self.stride = _per_dim(stride, ndim)
        self.padding = _per_dim(padding, ndim)
        self.subm = subm
        self.dilation = _per_dim(dilation, ndim)

    def forward(self, input: SparseConvTensor) -> SparseConvTensor:  # noqa: A002
        """Pool the active sites; returns a new SparseConvTensor.

        Raises:
            AssertionError: ``input`` is not a SparseConvTensor (as mmcv).
            ValueError: ``input`` has another number of spatial dimensions than the layer, or an
                index outside the batch x spatial shape.
        """
        check_sparse_input(self, input)
        spatial_shape = input.spatial_shape
        if self.subm:
            out_spatial_shape = spatial_shape
        else:
            out_spatial_shape = get_conv_output_size(
                spatial_shape, self.kernel_size, self.stride, self.padding, self.dilation
            )
        outids, indice_pairs, indice_pair_num = get_indice_pairs(
            input.indices, input.batch_size, spatial_shape, self.kernel_size, self.stride,
            self.padding, self.dilation, 0, self.subm,
        )  # fmt: skip
        device = input.features.device
        out_features = indice_maxpool(
            input.features, indice_pairs.to(device), indice_pair_num.to(device), outids.shape[0]
        )
        out = SparseConvTensor(out_features, outids, out_spatial_shape, input.batch_size)
        out.indice_dict = input.indice_dict
        out.grid = input.grid
        return out


class SparseMaxPool2d(SparseMaxPool):
    """2-D sparse max pooling."""

    def __init__(
        self, kernel_size: IntOrSeq, stride: IntOrSeq = 1, padding: IntOrSeq = 0,
        dilation: IntOrSeq = 1,
    ) -> None:  # fmt: skip
        super().__init__(2, kernel_size, stride, padding, dilation)


class SparseMaxPool3d(SparseMaxPool):
    """3-D sparse max pooling."""

    def __init__(
        self, kernel_size: IntOrSeq, stride: IntOrSeq = 1, padding: IntOrSeq = 0,
        dilation: IntOrSeq = 1,
    ) -> None:  # fmt: skip
        super().__init__(3, kernel_size, stride, padding, dilation)
