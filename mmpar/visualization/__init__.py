"""mmcv 1.x's ``mmcv.visualization``: colours, drawing boxes, showing images and flow."""

# ruff: noqa: F401 (the imports are the public names; ``__all__`` is read from the root's table)
from .._lazy_names import LAZY_SUBPACKAGES
from .color import Color, color_val
from .image import imshow, imshow_bboxes, imshow_det_bboxes
from .optflow import flow2rgb, flowshow, make_color_wheel

# The names are the row of the root's lazy table, so ``mmpar.<name>`` serves exactly these.
__all__ = list(LAZY_SUBPACKAGES["visualization"])
