"""mmcv.ops.deform_roi_pool: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import DEFORM_ROI_POOL, unsupported_class, unsupported_function

__all__ = ["DeformRoIPool", "DeformRoIPoolPack", "ModulatedDeformRoIPoolPack", "deform_roi_pool"]

DeformRoIPool = unsupported_class("DeformRoIPool", DEFORM_ROI_POOL, __name__)
DeformRoIPoolPack = unsupported_class("DeformRoIPoolPack", DEFORM_ROI_POOL, __name__)
ModulatedDeformRoIPoolPack = unsupported_class(
    "ModulatedDeformRoIPoolPack", DEFORM_ROI_POOL, __name__
)
deform_roi_pool = unsupported_function("deform_roi_pool", DEFORM_ROI_POOL, __name__)
