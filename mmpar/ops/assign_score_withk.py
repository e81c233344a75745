"""mmcv.ops.assign_score_withk: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import POINT_CLOUD, unsupported_function

__all__ = ["assign_score_withk"]

assign_score_withk = unsupported_function("assign_score_withk", POINT_CLOUD, __name__)
