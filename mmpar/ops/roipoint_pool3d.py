"""mmcv.ops.roipoint_pool3d: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import POINT_CLOUD, unsupported_class

__all__ = ["RoIPointPool3d"]

RoIPointPool3d = unsupported_class("RoIPointPool3d", POINT_CLOUD, __name__)
