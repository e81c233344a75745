"""mmcv.ops.riroi_align_rotated: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import ROTATED, unsupported_class, unsupported_function

__all__ = ["RiRoIAlignRotated", "riroi_align_rotated"]

RiRoIAlignRotated = unsupported_class("RiRoIAlignRotated", ROTATED, __name__)
riroi_align_rotated = unsupported_function("riroi_align_rotated", ROTATED, __name__)
