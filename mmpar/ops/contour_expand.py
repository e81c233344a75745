"""mmcv.ops.contour_expand: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import TEXT_DETECTION, unsupported_function

__all__ = ["contour_expand"]

contour_expand = unsupported_function("contour_expand", TEXT_DETECTION, __name__)
