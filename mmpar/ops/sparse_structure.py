"""mmcv.ops.sparse_structure: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import SPARSE_CONV, unsupported_class, unsupported_function

__all__ = ["SparseConvTensor", "scatter_nd"]

SparseConvTensor = unsupported_class("SparseConvTensor", SPARSE_CONV, __name__, base=object)
scatter_nd = unsupported_function("scatter_nd", SPARSE_CONV, __name__)
