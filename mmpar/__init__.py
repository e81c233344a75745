"""mmpar: the maintained successor of mmcv 1.x's runner and parallel stack."""

from .version import __version__

__all__ = ['__version__']
