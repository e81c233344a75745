"""mmcv.ops.gather_points: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import POINT_CLOUD, unsupported_function

__all__ = ["gather_points"]

gather_points = unsupported_function("gather_points", POINT_CLOUD, __name__)
