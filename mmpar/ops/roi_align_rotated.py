"""mmcv.ops.roi_align_rotated: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import ROTATED, unsupported_class, unsupported_function

__all__ = ["RoIAlignRotated", "roi_align_rotated"]

RoIAlignRotated = unsupported_class("RoIAlignRotated", ROTATED, __name__)
roi_align_rotated = unsupported_function("roi_align_rotated", ROTATED, __name__)
