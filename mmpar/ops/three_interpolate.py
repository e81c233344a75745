"""mmcv.ops.three_interpolate: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import POINT_CLOUD, unsupported_function

__all__ = ["three_interpolate"]

three_interpolate = unsupported_function("three_interpolate", POINT_CLOUD, __name__)
