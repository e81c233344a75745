"""mmcv.ops.correlation: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import CORRELATION, unsupported_class

__all__ = ["Correlation"]

Correlation = unsupported_class("Correlation", CORRELATION, __name__)
