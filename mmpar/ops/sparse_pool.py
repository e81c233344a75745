"""mmcv.ops.sparse_pool: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import SPARSE_CONV, unsupported_class

__all__ = ["SparseMaxPool2d", "SparseMaxPool3d"]

SparseMaxPool2d = unsupported_class("SparseMaxPool2d", SPARSE_CONV, __name__)
SparseMaxPool3d = unsupported_class("SparseMaxPool3d", SPARSE_CONV, __name__)
