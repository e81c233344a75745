"""mmcv 1.x's ``mmcv.visualization``: colours, drawing boxes, showing images and flow."""

from .color import Color, color_val
from .image import imshow, imshow_bboxes, imshow_det_bboxes
from .optflow import flow2rgb, flowshow, make_color_wheel

__all__ = [
    "Color",
    "color_val",
    "flow2rgb",
    "flowshow",
    "imshow",
    "imshow_bboxes",
    "imshow_det_bboxes",
    "make_color_wheel",
]
