"""mmpar: the maintained successor of mmcv 1.x's runner and parallel stack.

As in mmcv 1.x, the package root carries the names of ``mmpar.fileio`` and ``mmpar.utils``
(``mmpar.load``, ``mmpar.dump``, ``mmpar.FileClient``, ``mmpar.Config``, ...) and those of
``mmpar.image``, ``mmpar.video``, ``mmpar.visualization`` and ``mmpar.arraymisc``
(``mmpar.imread``, ``mmpar.imshow``, ``mmpar.VideoReader``, ``mmpar.quantize``, ...). Names
that need torch or OpenCV are looked up on first access (``__getattr__``), so ``import mmpar``
stays free of torch, numpy and cv2.

``mmpar.mmcv_version`` is the mmcv 1.x version mmpar stands in for (what ``mmcv.__version__``
reports in the zero-edit mode, and what the port tool puts where code read ``mmcv.__version__``);
``mmpar.__version__`` is mmpar's own.
"""

from typing import Any

from . import fileio, utils
from .fileio import *  # noqa: F403
from .utils import *  # noqa: F403
from .version import __version__ as __version__
from .version import mmcv_version as mmcv_version
from .version import parse_version_info as parse_version_info
from .version import version_info as version_info

__all__ = sorted(
    {
        *fileio.__all__,
        *utils.__all__,
        "__version__",
        "mmcv_version",
        "parse_version_info",
        "version_info",
    }
)

# mmcv's top-level names from its OpenCV/numpy subpackages, imported on first access. The test
# tests/test_image/test_package.py checks that these lists equal each subpackage's __all__.
_LAZY_SUBPACKAGES = {
    "arraymisc": ("dequantize", "quantize"),
    "image": (
        "adjust_brightness",
        "adjust_color",
        "adjust_contrast",
        "adjust_hue",
        "adjust_lighting",
        "adjust_sharpness",
        "auto_contrast",
        "bgr2gray",
        "bgr2hls",
        "bgr2hsv",
        "bgr2rgb",
        "bgr2ycbcr",
        "clahe",
        "cutout",
        "gray2bgr",
        "gray2rgb",
        "hls2bgr",
        "hsv2bgr",
        "imconvert",
        "imcrop",
        "imdenormalize",
        "imequalize",
        "imflip",
        "imflip_",
        "imfrombytes",
        "iminvert",
        "imnormalize",
        "imnormalize_",
        "impad",
        "impad_to_multiple",
        "imread",
        "imrescale",
        "imresize",
        "imresize_like",
        "imresize_to_multiple",
        "imrotate",
        "imshear",
        "imtranslate",
        "imwrite",
        "lut_transform",
        "posterize",
        "rescale_size",
        "rgb2bgr",
        "rgb2gray",
        "rgb2ycbcr",
        "solarize",
        "supported_backends",
        "tensor2imgs",
        "use_backend",
        "ycbcr2bgr",
        "ycbcr2rgb",
    ),
    "video": (
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
    ),
    "visualization": (
        "Color",
        "color_val",
        "flow2rgb",
        "flowshow",
        "imshow",
        "imshow_bboxes",
        "imshow_det_bboxes",
        "make_color_wheel",
    ),
}
_LAZY = {name: sub for sub, names in _LAZY_SUBPACKAGES.items() for name in names}


def __getattr__(name: str) -> Any:
    """Serve a lazily imported subpackage or name (PEP 562), else one of ``mmpar.utils``."""
    import importlib

    if name in _LAZY_SUBPACKAGES:
        # mmcv imports these subpackages eagerly, so ``mmcv.image.imwrite`` works after a bare
        # ``import mmcv``; importing the submodule also binds it here.
        return importlib.import_module(f"{__name__}.{name}")
    subpackage = _LAZY.get(name)
    if subpackage is not None:
        value = getattr(importlib.import_module(f"{__name__}.{subpackage}"), name)
        globals()[name] = value  # later lookups skip this function
        return value
    try:
        return getattr(utils, name)
    except AttributeError:
        raise AttributeError(f"module 'mmpar' has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY_SUBPACKAGES, *_LAZY, *utils.__dir__()})
