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
from ._lazy_names import LAZY_SUBPACKAGES as _LAZY_SUBPACKAGES
from .fileio import *  # noqa: F403
from .utils import *  # noqa: F403
from .version import __version__ as __version__
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

# mmcv's top-level names from its OpenCV/numpy subpackages (a table of each subpackage's
# ``__all__``), imported on first access.
_LAZY = {name: sub for sub, names in _LAZY_SUBPACKAGES.items() for name in names}


def __getattr__(name: str) -> Any:
    """Serve a lazily imported subpackage or name (PEP 562), else one of ``mmpar.utils``."""
    import importlib

    if name == "mmcv_version":  # read from the environment on first use (see mmpar.version)
        from . import version

        return version.mmcv_version
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
    return sorted({*globals(), "mmcv_version", *_LAZY_SUBPACKAGES, *_LAZY, *utils.__dir__()})
