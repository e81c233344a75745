"""Runner hooks, one family per module; importing this package registers them all in HOOKS.

The names are mmcv 1.x's ``mmcv.runner.hooks`` (plus mmpar's EarlyStoppingHook, NanGuardHook
and PreemptionHook). Experiment-tracker libraries are imported only when their hook is built.
"""

from .checkpoint import CheckpointHook
from .closure import ClosureHook
from .early_stopping import EarlyStoppingHook
from .ema import EMAHook
from .evaluation import DistEvalHook, EvalHook
from .hook import HOOKS, Hook
from .iter_timer import IterTimerHook
from .logger import (
    ClearMLLoggerHook,
    DvcliveLoggerHook,
    LoggerHook,
    MlflowLoggerHook,
    NeptuneLoggerHook,
    PaviLoggerHook,
    SegmindLoggerHook,
    TensorboardLoggerHook,
    TextLoggerHook,
    WandbLoggerHook,
)
from .lr_updater import (
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
from .memory import EmptyCacheHook
from .momentum_updater import (
    CosineAnnealingMomentumUpdaterHook,
    CyclicMomentumUpdaterHook,
    LinearAnnealingMomentumUpdaterHook,
    MomentumUpdaterHook,
    OneCycleMomentumUpdaterHook,
    StepMomentumUpdaterHook,
)
from .nan_guard import NanGuardHook
from .optimizer import (
    Fp16OptimizerHook,
    GradientCumulativeFp16OptimizerHook,
    GradientCumulativeOptimizerHook,
    OptimizerHook,
)
from .preemption import (
    INTERRUPTED_EXIT_CODE,
    PREEMPTED_EXIT_CODE,
    PreemptionHook,
    TrainingPreempted,
)
from .profiler import ProfilerHook
from .sampler_seed import DistSamplerSeedHook
from .sync_buffer import SyncBuffersHook

__all__ = [
    "HOOKS",
    "INTERRUPTED_EXIT_CODE",
    "PREEMPTED_EXIT_CODE",
    "CheckpointHook",
    "ClearMLLoggerHook",
    "ClosureHook",
    "CosineAnnealingLrUpdaterHook",
    "CosineAnnealingMomentumUpdaterHook",
    "CosineRestartLrUpdaterHook",
    "CyclicLrUpdaterHook",
    "CyclicMomentumUpdaterHook",
    "DistEvalHook",
    "DistSamplerSeedHook",
    "DvcliveLoggerHook",
    "EMAHook",
    "EarlyStoppingHook",
    "EmptyCacheHook",
    "EvalHook",
    "ExpLrUpdaterHook",
    "FixedLrUpdaterHook",
    "FlatCosineAnnealingLrUpdaterHook",
    "Fp16OptimizerHook",
    "GradientCumulativeFp16OptimizerHook",
    "GradientCumulativeOptimizerHook",
    "Hook",
    "InvLrUpdaterHook",
    "IterTimerHook",
    "LinearAnnealingLrUpdaterHook",
    "LinearAnnealingMomentumUpdaterHook",
    "LoggerHook",
    "LrUpdaterHook",
    "MlflowLoggerHook",
    "MomentumUpdaterHook",
    "NanGuardHook",
    "NeptuneLoggerHook",
    "OneCycleLrUpdaterHook",
    "OneCycleMomentumUpdaterHook",
    "OptimizerHook",
    "PaviLoggerHook",
    "PolyLrUpdaterHook",
    "PreemptionHook",
    "ProfilerHook",
    "SegmindLoggerHook",
    "StepLrUpdaterHook",
    "StepMomentumUpdaterHook",
    "SyncBuffersHook",
    "TensorboardLoggerHook",
    "TextLoggerHook",
    "TrainingPreempted",
    "WandbLoggerHook",
]
