"""mmcv 1.x's ``mmcv.arraymisc``: uniform quantization of numpy arrays."""

from .quantization import dequantize, quantize

__all__ = ["dequantize", "quantize"]
