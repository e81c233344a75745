"""mmpar: the maintained successor of mmcv 1.x's runner and parallel stack."""

from .utils import Config, ConfigDict, DictAction, Registry, build_from_cfg
from .version import __version__

__all__ = ["Config", "ConfigDict", "DictAction", "Registry", "__version__", "build_from_cfg"]
