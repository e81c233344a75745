"""mmcv 1.x's ``mmcv.video``: frame access with OpenCV, optical-flow files, ffmpeg helpers."""

# ruff: noqa: F401 (the imports are the public names; ``__all__`` is read from the root's table)
from .._lazy_names import LAZY_SUBPACKAGES
from .io import Cache, VideoReader, frames2video
from .optflow import (
    dequantize_flow,
    flow_from_bytes,
    flow_warp,
    flowread,
    flowwrite,
    quantize_flow,
    sparse_flow_from_bytes,
)
from .processing import concat_video, convert_video, cut_video, resize_video

# The names are the row of the root's lazy table, so ``mmpar.<name>`` serves exactly these.
__all__ = list(LAZY_SUBPACKAGES["video"])
