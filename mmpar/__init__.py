"""mmpar: the maintained successor of mmcv 1.x's runner and parallel stack.

As in mmcv 1.x, the package root carries the names of ``mmpar.fileio`` and ``mmpar.utils``
(``mmpar.load``, ``mmpar.dump``, ``mmpar.FileClient``, ``mmpar.Config``, ...). Names that
``mmpar.utils`` serves lazily (those needing torch) are looked up there on first access, so
``import mmpar`` stays free of torch.

``mmpar.mmcv_version`` is the mmcv 1.x version mmpar stands in for (what ``mmcv.__version__``
reports in the zero-edit mode, and what the port tool puts where code read ``mmcv.__version__``);
``mmpar.__version__`` is mmpar's own.
"""

from . import fileio, utils
from .fileio import *  # noqa: F403
from .utils import *  # noqa: F403
from .version import __version__ as __version__
from .version import mmcv_version as mmcv_version

__all__ = sorted({*fileio.__all__, *utils.__all__, "__version__", "mmcv_version"})


def __getattr__(name: str):
    """Serve a name ``mmpar.utils`` provides lazily (e.g. one that imports torch)."""
    try:
        return getattr(utils, name)
    except AttributeError:
        raise AttributeError(f"module 'mmpar' has no attribute {name!r}") from None
