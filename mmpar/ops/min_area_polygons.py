"""mmcv.ops.min_area_polygons: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import ROTATED, unsupported_function

__all__ = ["min_area_polygons"]

min_area_polygons = unsupported_function("min_area_polygons", ROTATED, __name__)
