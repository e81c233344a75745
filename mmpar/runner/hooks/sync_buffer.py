"""SyncBuffersHook: average the model's buffers (BatchNorm statistics, ...) over ranks."""

from __future__ import annotations

from mmpar.utils.dist import allreduce_params

from ..runner_protocol import RunnerLike
from .hook import HOOKS, Hook


@HOOKS.register_module()
class SyncBuffersHook(Hook):
    """Average every buffer of ``runner.model`` over all ranks after each epoch (mmcv 1.x API).

    Each rank's BatchNorm running statistics drift apart in distributed training; averaging
    them before evaluating or saving makes every rank hold the same model. Integer buffers
    (``num_batches_tracked``) get the floor of the mean.

    Args:
        distributed: Whether training is distributed; with False the hook does nothing.
            Without a process group it does nothing either.
    """

    def __init__(self, distributed: bool = True) -> None:
        self.distributed = distributed

    def after_epoch(self, runner: RunnerLike) -> None:
        """All-reduce (average) the model's buffers."""
        if self.distributed:
            allreduce_params(runner.model.buffers())


__all__ = ["SyncBuffersHook"]
