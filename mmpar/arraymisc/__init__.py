"""mmcv 1.x's ``mmcv.arraymisc``: uniform quantization of numpy arrays."""

from .quantization import dequantize, quantize

# mmpar/_lazy_names.py lists these names again for the root (``mmpar.<name>``), which must
# not import this package to know them; tests/test_image/test_package.py checks they agree.
__all__ = [
    "dequantize",
    "quantize",
]
