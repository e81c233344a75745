"""mmcv.ops.border_align: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import BORDER_ALIGN, unsupported_class, unsupported_function

__all__ = ["BorderAlign", "border_align"]

BorderAlign = unsupported_class("BorderAlign", BORDER_ALIGN, __name__)
border_align = unsupported_function("border_align", BORDER_ALIGN, __name__)
