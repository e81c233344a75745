"""mmcv 1.x's ``mmcv.cnn.rfsearch``: receptive-field search of dilation rates (RF-Next)."""

from .operator import BaseConvRFSearchOp, Conv2dRFSearchOp
from .search import RFSearchHook

__all__ = ["BaseConvRFSearchOp", "Conv2dRFSearchOp", "RFSearchHook"]
