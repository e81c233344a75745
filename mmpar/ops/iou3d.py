"""mmcv.ops.iou3d: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import POINT_CLOUD, unsupported_function

__all__ = [
    "boxes_iou3d",
    "boxes_iou_bev",
    "boxes_overlap_bev",
    "nms3d",
    "nms3d_normal",
    "nms_bev",
    "nms_normal_bev",
]

boxes_iou3d = unsupported_function("boxes_iou3d", POINT_CLOUD, __name__)
boxes_iou_bev = unsupported_function("boxes_iou_bev", POINT_CLOUD, __name__)
boxes_overlap_bev = unsupported_function("boxes_overlap_bev", POINT_CLOUD, __name__)
nms3d = unsupported_function("nms3d", POINT_CLOUD, __name__)
nms3d_normal = unsupported_function("nms3d_normal", POINT_CLOUD, __name__)
nms_bev = unsupported_function("nms_bev", POINT_CLOUD, __name__)
nms_normal_bev = unsupported_function("nms_normal_bev", POINT_CLOUD, __name__)
