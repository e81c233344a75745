"""mmcv.ops.prroi_pool: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import PRROI_POOL, unsupported_class, unsupported_function

__all__ = ["PrRoIPool", "prroi_pool"]

PrRoIPool = unsupported_class("PrRoIPool", PRROI_POOL, __name__)
prroi_pool = unsupported_function("prroi_pool", PRROI_POOL, __name__)
