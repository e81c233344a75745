"""mmcv 1.x's ``mmcv.arraymisc``: uniform quantization of numpy arrays."""

# ruff: noqa: F401 (the imports are the public names; ``__all__`` is read from the root's table)
from .._lazy_names import LAZY_SUBPACKAGES
from .quantization import dequantize, quantize

# The names are the row of the root's lazy table, so ``mmpar.<name>`` serves exactly these.
__all__ = list(LAZY_SUBPACKAGES["arraymisc"])
