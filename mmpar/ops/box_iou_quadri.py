"""mmcv.ops.box_iou_quadri: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import ROTATED, unsupported_function

__all__ = ["box_iou_quadri"]

box_iou_quadri = unsupported_function("box_iou_quadri", ROTATED, __name__)
