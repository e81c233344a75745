"""mmcv.ops.sparse_modules: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import SPARSE_CONV, unsupported_class

__all__ = ["SparseModule", "SparseSequential"]

SparseModule = unsupported_class("SparseModule", SPARSE_CONV, __name__)
SparseSequential = unsupported_class("SparseSequential", SPARSE_CONV, __name__)
