"""mmcv.ops.scatter_points: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import POINT_CLOUD, unsupported_class, unsupported_function

__all__ = ["DynamicScatter", "dynamic_scatter"]

DynamicScatter = unsupported_class("DynamicScatter", POINT_CLOUD, __name__)
dynamic_scatter = unsupported_function("dynamic_scatter", POINT_CLOUD, __name__)
