"""mmcv 1.x's ``mmcv.video``: frame access with OpenCV, optical-flow files, ffmpeg helpers."""

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

# mmpar/_lazy_names.py lists these names again for the root (``mmpar.<name>``), which must
# not import this package to know them; tests/test_image/test_package.py checks they agree.
__all__ = [
    "Cache",
    "VideoReader",
    "concat_video",
    "convert_video",
    "cut_video",
    "dequantize_flow",
    "flow_from_bytes",
    "flow_warp",
    "flowread",
    "flowwrite",
    "frames2video",
    "quantize_flow",
    "resize_video",
    "sparse_flow_from_bytes",
]
