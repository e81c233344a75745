"""mmcv.ops.chamfer_distance: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import POINT_CLOUD, unsupported_function

__all__ = ["chamfer_distance"]

chamfer_distance = unsupported_function("chamfer_distance", POINT_CLOUD, __name__)
