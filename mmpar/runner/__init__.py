"""mmpar.runner: runners, hooks, checkpoints and optimizers (mmcv 1.x public names)."""

from .base_module import BaseModule, ModuleDict, ModuleList, Sequential
from .base_runner import BaseRunner
from .builder import RUNNER_BUILDERS, RUNNERS, DefaultRunnerConstructor, build_runner
from .checkpoint import (
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
from .dist_utils import (
    all_reduce_dict,
    allreduce_grads,
    allreduce_params,
    barrier,
    broadcast_object,
    collect_results,
    destroy_dist,
    get_dist_info,
    init_dist,
    master_only,
)
from .epoch_based_runner import EpochBasedRunner, Runner
from .fp16_utils import LossScaler, auto_fp16, force_fp32, wrap_fp16_model
from .hooks import HOOKS, Hook
from .hooks.checkpoint import CheckpointHook
from .hooks.early_stopping import EarlyStoppingHook
from .hooks.ema import EMAHook
from .hooks.evaluation import DistEvalHook, EvalHook
from .hooks.iter_timer import IterTimerHook
from .hooks.logger.base import LoggerHook
from .hooks.logger.tensorboard import TensorboardLoggerHook
from .hooks.logger.text import TextLoggerHook
from .hooks.lr_updater import (
    CosineAnnealingLrUpdaterHook,
    CosineRestartLrUpdaterHook,
    CyclicLrUpdaterHook,
    ExpLrUpdaterHook,
    FixedLrUpdaterHook,
    FlatCosineAnnealingLrUpdaterHook,
    InvLrUpdaterHook,
    LinearAnnealingLrUpdaterHook,
    LrUpdaterHook,
    OneCycleLrUpdaterHook,
    PolyLrUpdaterHook,
    StepLrUpdaterHook,
)
from .hooks.momentum_updater import (
    CosineAnnealingMomentumUpdaterHook,
    CyclicMomentumUpdaterHook,
    LinearAnnealingMomentumUpdaterHook,
    MomentumUpdaterHook,
    OneCycleMomentumUpdaterHook,
    StepMomentumUpdaterHook,
)
from .hooks.nan_guard import NanGuardHook
from .hooks.optimizer import (
    Fp16OptimizerHook,
    GradientCumulativeFp16OptimizerHook,
    GradientCumulativeOptimizerHook,
    OptimizerHook,
)
from .hooks.profiler import ProfilerHook
from .hooks.sampler_seed import DistSamplerSeedHook
from .hooks.sync_buffer import SyncBuffersHook
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
    "HOOKS",
    "OPTIMIZERS",
    "OPTIMIZER_BUILDERS",
    "RUNNERS",
    "RUNNER_BUILDERS",
    "BaseModule",
    "BaseRunner",
    "CheckpointError",
    "CheckpointHook",
    "CheckpointLoader",
    "CheckpointMismatchError",
    "CheckpointSaveError",
    "CorruptCheckpointError",
    "CosineAnnealingLrUpdaterHook",
    "CosineAnnealingMomentumUpdaterHook",
    "CosineRestartLrUpdaterHook",
    "CyclicLrUpdaterHook",
    "CyclicMomentumUpdaterHook",
    "DefaultOptimizerConstructor",
    "DefaultRunnerConstructor",
    "DistEvalHook",
    "DistSamplerSeedHook",
    "EMAHook",
    "EarlyStoppingHook",
    "EpochBasedRunner",
    "EvalHook",
    "ExpLrUpdaterHook",
    "FixedLrUpdaterHook",
    "FlatCosineAnnealingLrUpdaterHook",
    "Fp16OptimizerHook",
    "GradientCumulativeFp16OptimizerHook",
    "GradientCumulativeOptimizerHook",
    "Hook",
    "InvLrUpdaterHook",
    "IterBasedRunner",
    "IterLoader",
    "IterTimerHook",
    "LinearAnnealingLrUpdaterHook",
    "LinearAnnealingMomentumUpdaterHook",
    "LogBuffer",
    "LoggerHook",
    "LossScaler",
    "LrUpdaterHook",
    "ModuleDict",
    "ModuleList",
    "MomentumUpdaterHook",
    "NanGuardHook",
    "OneCycleLrUpdaterHook",
    "OneCycleMomentumUpdaterHook",
    "OptimizerHook",
    "PolyLrUpdaterHook",
    "Priority",
    "ProfilerHook",
    "Runner",
    "Sequential",
    "StepLrUpdaterHook",
    "StepMomentumUpdaterHook",
    "SyncBuffersHook",
    "TensorboardLoggerHook",
    "TextLoggerHook",
    "UnsafeCheckpointError",
    "_load_checkpoint",
    "_load_checkpoint_with_prefix",
    "all_reduce_dict",
    "allreduce_grads",
    "allreduce_params",
    "auto_fp16",
    "barrier",
    "broadcast_object",
    "build_optimizer",
    "build_optimizer_constructor",
    "build_runner",
    "collect_results",
    "destroy_dist",
    "find_latest_checkpoint",
    "force_fp32",
    "get_dist_info",
    "get_host_info",
    "get_priority",
    "get_state_dict",
    "get_time_str",
    "init_dist",
    "load_checkpoint",
    "load_state_dict",
    "master_only",
    "obj_from_dict",
    "save_checkpoint",
    "set_random_seed",
    "weights_to_cpu",
    "wrap_fp16_model",
]
