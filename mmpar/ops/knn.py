"""mmcv.ops.knn: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import POINT_CLOUD, unsupported_function

__all__ = ["knn"]

knn = unsupported_function("knn", POINT_CLOUD, __name__)
