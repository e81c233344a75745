"""mmcv.ops.active_rotated_filter: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import ROTATED, unsupported_function

__all__ = ["active_rotated_filter"]

active_rotated_filter = unsupported_function("active_rotated_filter", ROTATED, __name__)
