"""mmpar.runner: runners, hooks, checkpoints and optimizers (mmcv 1.x public names)."""

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.device import ipu as ipu

from . import checkpoint, dist_utils, hooks
from .base_module import BaseModule, ModuleDict, ModuleList, Sequential
from .base_runner import BaseRunner
from .builder import RUNNER_BUILDERS, RUNNERS, DefaultRunnerConstructor, build_runner
from .checkpoint import (  # noqa: F401 (re-exported: __all__ takes the names imported here)
    CheckpointDownloadError,
    CheckpointError,
    CheckpointLoader,
    CheckpointMismatchError,
    CheckpointSaveError,
    CorruptCheckpointError,
    UnsafeCheckpointError,
    _load_checkpoint,
    _load_checkpoint_with_prefix,
    find_latest_checkpoint,
    get_state_dict,
    load_checkpoint,
    load_state_dict,
    save_checkpoint,
    weights_to_cpu,
)
from .dist_utils import *  # noqa: F403  (mmcv.runner re-exports every one)
from .epoch_based_runner import EpochBasedRunner, Runner
from .fp16_utils import LossScaler, auto_fp16, force_fp32, wrap_fp16_model
from .hooks import *  # noqa: F403  (mmcv.runner re-exports every hook)
from .iter_based_runner import IterBasedRunner, IterLoader
from .log_buffer import LogBuffer
from .optimizer import (
    OPTIMIZER_BUILDERS,
    OPTIMIZERS,
    DefaultOptimizerConstructor,
    build_optimizer,
    build_optimizer_constructor,
)
from .priority import Priority, get_priority
from .utils import get_host_info, get_time_str, obj_from_dict, set_random_seed

__all__ = [
    "OPTIMIZERS",
    "OPTIMIZER_BUILDERS",
    "RUNNERS",
    "RUNNER_BUILDERS",
    "BaseModule",
    "BaseRunner",
    "DefaultOptimizerConstructor",
    "DefaultRunnerConstructor",
    "EpochBasedRunner",
    "IterBasedRunner",
    "IterLoader",
    "LogBuffer",
    "LossScaler",
    "ModuleDict",
    "ModuleList",
    "Priority",
    "Runner",
    "Sequential",
    "auto_fp16",
    "build_optimizer",
    "build_optimizer_constructor",
    "build_runner",
    "force_fp32",
    "get_host_info",
    "get_priority",
    "get_time_str",
    "obj_from_dict",
    "set_random_seed",
    "wrap_fp16_model",
    *dist_utils.__all__,
    *hooks.__all__,
    # The checkpoint names mmpar.runner re-exports are listed once, in the import above.
    *(name for name in checkpoint.__all__ if name in globals()),
]
