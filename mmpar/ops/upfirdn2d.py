"""mmcv.ops.upfirdn2d: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import GAN, unsupported_function

__all__ = ["upfirdn2d"]

upfirdn2d = unsupported_function("upfirdn2d", GAN, __name__)
