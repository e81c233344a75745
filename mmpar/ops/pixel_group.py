"""mmcv.ops.pixel_group: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import TEXT_DETECTION, unsupported_function

__all__ = ["pixel_group"]

pixel_group = unsupported_function("pixel_group", TEXT_DETECTION, __name__)
