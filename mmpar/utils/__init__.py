"""mmpar.utils: config, registry, plugins, logging, seeding, and mmcv 1.x's ``mmcv.utils`` names.

Importing this package does not import torch. The names that need torch (``TORCH_VERSION``,
``_BatchNorm``, ``IS_CUDA_AVAILABLE``, ``load_url``, ...) are listed in ``_LAZY`` and imported
on first access, so they are not in ``__all__``: ``from mmpar.utils import *`` stays light.
"""

from typing import Any

from . import misc, testing
from .compat_errors import NOT_PROVIDED, not_provided
from .config import (
    Config,
    ConfigDict,
    ConfigError,
    ConfigOptionError,
    ConfigSyntaxError,
    DictAction,
)
from .env import collect_env
from .logging import get_logger, print_log
from .misc import *  # noqa: F403 (its names are listed once, in misc.__all__)
from .parrots_jit import jit, skip_no_elena
from .path import check_file_exist, fopen, is_filepath, mkdir_or_exist, scandir, symlink
from .plugins import load_entry_point_plugins
from .progressbar import ProgressBar, track_iter_progress, track_parallel_progress, track_progress
from .registry import ConfigArgumentError, Registry, build_from_cfg
from .seed import worker_init_fn
from .testing import *  # noqa: F403 (its names are listed once, in testing.__all__)
from .timer import Timer, TimerError, check_time
from .version_utils import digit_version, get_git_hash

# Names that import torch, served on first access by ``__getattr__``: name -> submodule.
_LAZY = {
    "DataLoader": "parrots_wrapper",
    "IS_CUDA_AVAILABLE": "parrots_wrapper",
    "PoolDataLoader": "parrots_wrapper",
    "SyncBatchNorm": "parrots_wrapper",
    "TORCH_VERSION": "parrots_wrapper",
    "_AdaptiveAvgPoolNd": "parrots_wrapper",
    "_AdaptiveMaxPoolNd": "parrots_wrapper",
    "_AvgPoolNd": "parrots_wrapper",
    "_BatchNorm": "parrots_wrapper",
    "_ConvNd": "parrots_wrapper",
    "_ConvTransposeMixin": "parrots_wrapper",
    "_InstanceNorm": "parrots_wrapper",
    "_MaxPoolNd": "parrots_wrapper",
    "get_build_config": "parrots_wrapper",
    "is_rocm_pytorch": "parrots_wrapper",
    "IS_IPU_AVAILABLE": "device_type",
    "IS_MLU_AVAILABLE": "device_type",
    "IS_MPS_AVAILABLE": "device_type",
    "IS_NPU_AVAILABLE": "device_type",
    "load_url": "hub",
    "torch_meshgrid": "torch_ops",
    "is_jit_tracing": "trace",
}


def __getattr__(name: str) -> Any:
    """Import a torch-dependent name on first use (PEP 562), or explain a missing one."""
    submodule = _LAZY.get(name)
    if submodule is not None:
        import importlib

        value = getattr(importlib.import_module(f"{__name__}.{submodule}"), name)
        globals()[name] = value  # later lookups skip this function
        return value
    if name in NOT_PROVIDED:
        raise not_provided(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


# misc's and testing's names are listed once, in their modules (misc keeps two helpers internal).
__all__ = [
    *(name for name in misc.__all__ if name not in ("check_int_arg", "import_optional")),
    *testing.__all__,
    "Config",
    "ConfigArgumentError",
    "ConfigDict",
    "ConfigError",
    "ConfigOptionError",
    "ConfigSyntaxError",
    "DictAction",
    "ProgressBar",
    "Registry",
    "Timer",
    "TimerError",
    "build_from_cfg",
    "check_file_exist",
    "check_time",
    "collect_env",
    "digit_version",
    "fopen",
    "get_git_hash",
    "get_logger",
    "is_filepath",
    "jit",
    "load_entry_point_plugins",
    "mkdir_or_exist",
    "print_log",
    "scandir",
    "skip_no_elena",
    "symlink",
    "track_iter_progress",
    "track_parallel_progress",
    "track_progress",
    "worker_init_fn",
]
__all__.sort()  # one sorted list, whatever order the modules list theirs in
