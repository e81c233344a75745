"""mmpar.device (mmcv 1.x ``mmcv.device``): ``get_device``, scatter to it, per-backend wrappers.

``mps`` runs on torch's Metal backend. ``npu``, ``mlu`` and ``ipu`` import without their vendor
libraries; mmpar does not ship those backends, so using one of their names raises
:class:`BackendNotSupportedError` (a RuntimeError; mmpar's addition) saying what to use instead.

Layer: the wrappers subclass :mod:`mmpar.parallel`'s, and mmcv's ``scatter`` handles its
DataContainer, so this package sits at parallel's layer (see tests/test_layering.py).
"""

from . import ipu, mlu, mps, npu
from ._unsupported import BackendNotSupportedError
from .scatter_gather import scatter, scatter_kwargs
from .utils import get_device

__all__ = [
    "BackendNotSupportedError",
    "get_device",
    "ipu",
    "mlu",
    "mps",
    "npu",
    "scatter",
    "scatter_kwargs",
]
