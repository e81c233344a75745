"""mmpar.utils: config, registry, plugins, logging, seeding, and mmcv 1.x's ``mmcv.utils`` names.

Importing this package does not import torch. The names that need torch (``TORCH_VERSION``,
``_BatchNorm``, ``IS_CUDA_AVAILABLE``, ``load_url``, ...) are listed in ``_LAZY`` and imported
on first access, so they are not in ``__all__``: ``from mmpar.utils import *`` stays light.
"""

from typing import Any

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
from .misc import (
    check_prerequisites,
    concat_list,
    deprecated_api_warning,
    has_method,
    import_modules_from_strings,
    is_list_of,
    is_method_overridden,
    is_seq_of,
    is_str,
    is_tuple_of,
    iter_cast,
    list_cast,
    requires_executable,
    requires_package,
    set_random_seed,
    slice_list,
    to_1tuple,
    to_2tuple,
    to_3tuple,
    to_4tuple,
    to_ntuple,
    tuple_cast,
)
from .parrots_jit import jit, skip_no_elena
from .path import check_file_exist, fopen, is_filepath, mkdir_or_exist, scandir, symlink
from .plugins import load_entry_point_plugins
from .progressbar import ProgressBar, track_iter_progress, track_parallel_progress, track_progress
from .registry import ConfigArgumentError, Registry, build_from_cfg
from .seed import worker_init_fn
from .testing import (
    assert_attrs_equal,
    assert_dict_contains_subset,
    assert_dict_has_keys,
    assert_is_norm_layer,
    assert_keys_equal,
    assert_params_all_zeros,
    check_python_script,
)
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


__all__ = [
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
    "assert_attrs_equal",
    "assert_dict_contains_subset",
    "assert_dict_has_keys",
    "assert_is_norm_layer",
    "assert_keys_equal",
    "assert_params_all_zeros",
    "build_from_cfg",
    "check_file_exist",
    "check_prerequisites",
    "check_python_script",
    "check_time",
    "collect_env",
    "concat_list",
    "deprecated_api_warning",
    "digit_version",
    "fopen",
    "get_git_hash",
    "get_logger",
    "has_method",
    "import_modules_from_strings",
    "is_filepath",
    "is_list_of",
    "is_method_overridden",
    "is_seq_of",
    "is_str",
    "is_tuple_of",
    "iter_cast",
    "jit",
    "list_cast",
    "load_entry_point_plugins",
    "mkdir_or_exist",
    "print_log",
    "requires_executable",
    "requires_package",
    "scandir",
    "set_random_seed",
    "skip_no_elena",
    "slice_list",
    "symlink",
    "to_1tuple",
    "to_2tuple",
    "to_3tuple",
    "to_4tuple",
    "to_ntuple",
    "track_iter_progress",
    "track_parallel_progress",
    "track_progress",
    "tuple_cast",
    "worker_init_fn",
]
