"""mmcv 1.x's ``mmcv.visualization``: colours, drawing boxes, showing images and flow."""

from .color import Color, color_val
from .image import imshow, imshow_bboxes, imshow_det_bboxes
from .optflow import flow2rgb, flowshow, make_color_wheel

# mmpar/_lazy_names.py lists these names again for the root (``mmpar.<name>``), which must
# not import this package to know them; tests/test_image/test_package.py checks they agree.
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
