"""mmcv 1.x's ``mmcv.image`` on numpy, OpenCV and Pillow (torch is not imported here).

Reading and writing, geometric and photometric transforms, colour spaces and ``tensor2imgs``.

Arrays are BGR by default, as in OpenCV and mmcv; the functions give mmcv's arrays for the
same input (interpolation and border codes, rounding, dtypes).

Bad input, for every function here (each docstring adds its own cases): a valid result, or
one error of the type its docstring names. An argument that is not an image (``img`` not an
``(h, w)`` or ``(h, w, c)`` array) raises ``NotAnImageError`` (a ``ValueError`` and
``TypeError``); an array OpenCV refuses (empty, a dtype or channel count it cannot take)
raises ``ImageOpError`` (a ``ValueError`` naming the function, shape and dtype, and the
``cv2.error`` mmcv let through); mmcv's ``assert`` checks raise ``CheckValueError`` /
``CheckTypeError`` (also ``AssertionError``). ``imread`` names the file it cannot read. The
table is in docs/reliability.md; tests/test_image/test_bad_input_properties.py checks it.
"""

from .colorspace import (
    bgr2gray,
    bgr2hls,
    bgr2hsv,
    bgr2rgb,
    bgr2ycbcr,
    gray2bgr,
    gray2rgb,
    hls2bgr,
    hsv2bgr,
    imconvert,
    rgb2bgr,
    rgb2gray,
    rgb2ycbcr,
    ycbcr2bgr,
    ycbcr2rgb,
)
from .geometric import (
    cutout,
    imcrop,
    imflip,
    imflip_,
    impad,
    impad_to_multiple,
    imrescale,
    imresize,
    imresize_like,
    imresize_to_multiple,
    imrotate,
    imshear,
    imtranslate,
    rescale_size,
)
from .io import imfrombytes, imread, imwrite, supported_backends, use_backend
from .misc import tensor2imgs
from .photometric import (
    adjust_brightness,
    adjust_color,
    adjust_contrast,
    adjust_hue,
    adjust_lighting,
    adjust_sharpness,
    auto_contrast,
    clahe,
    imdenormalize,
    imequalize,
    iminvert,
    imnormalize,
    imnormalize_,
    lut_transform,
    posterize,
    solarize,
)

# mmpar/_lazy_names.py lists these names again for the root (``mmpar.<name>``), which must
# not import this package to know them; tests/test_image/test_package.py checks they agree.
__all__ = [
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
]
