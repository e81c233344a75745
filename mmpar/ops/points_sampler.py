"""mmcv.ops.points_sampler: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import POINT_CLOUD, unsupported_class

__all__ = ["PointsSampler"]

PointsSampler = unsupported_class("PointsSampler", POINT_CLOUD, __name__)
