"""mmcv.ops.points_in_polygons: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import ROTATED, unsupported_function

__all__ = ["points_in_polygons"]

points_in_polygons = unsupported_function("points_in_polygons", ROTATED, __name__)
