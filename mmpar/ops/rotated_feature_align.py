"""mmcv.ops.rotated_feature_align: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import ROTATED, unsupported_function

__all__ = ["rotated_feature_align"]

rotated_feature_align = unsupported_function("rotated_feature_align", ROTATED, __name__)
