"""mmcv.ops.points_in_boxes: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import POINT_CLOUD, unsupported_function

__all__ = ["points_in_boxes_all", "points_in_boxes_cpu", "points_in_boxes_part"]

points_in_boxes_all = unsupported_function("points_in_boxes_all", POINT_CLOUD, __name__)
points_in_boxes_cpu = unsupported_function("points_in_boxes_cpu", POINT_CLOUD, __name__)
points_in_boxes_part = unsupported_function("points_in_boxes_part", POINT_CLOUD, __name__)
