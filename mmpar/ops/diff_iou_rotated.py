"""mmcv.ops.diff_iou_rotated: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import ROTATED, unsupported_function

__all__ = ["diff_iou_rotated_2d", "diff_iou_rotated_3d"]

diff_iou_rotated_2d = unsupported_function("diff_iou_rotated_2d", ROTATED, __name__)
diff_iou_rotated_3d = unsupported_function("diff_iou_rotated_3d", ROTATED, __name__)
