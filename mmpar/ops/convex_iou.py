"""mmcv.ops.convex_iou: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import ROTATED, unsupported_function

__all__ = ["convex_giou", "convex_iou"]

convex_giou = unsupported_function("convex_giou", ROTATED, __name__)
convex_iou = unsupported_function("convex_iou", ROTATED, __name__)
