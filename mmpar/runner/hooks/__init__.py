"""Runner hooks, one family per module; importing this package registers them all in HOOKS."""

from . import (  # noqa: F401  (register the hooks)
    checkpoint,
    early_stopping,
    ema,
    evaluation,
    iter_timer,
    logger,
    lr_updater,
    momentum_updater,
    nan_guard,
    optimizer,
    profiler,
    sampler_seed,
)
from .hook import HOOKS, Hook

__all__ = ["HOOKS", "Hook"]
