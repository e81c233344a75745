"""EmptyCacheHook: release cached CUDA memory at epoch and/or iteration ends."""

from __future__ import annotations

import torch

from ..runner_protocol import RunnerLike
from .hook import HOOKS, Hook


def _release_cuda_cache() -> None:
    # A process that never initialised CUDA (CPU training) has no cache to release; asking
    # would only start a CUDA context.
    if torch.cuda.is_initialized():
        torch.cuda.empty_cache()


@HOOKS.register_module()
class EmptyCacheHook(Hook):
    """Call ``torch.cuda.empty_cache()`` before/after epochs and/or after iterations.

    Releasing the caching allocator's unused blocks lowers the memory other processes see as
    taken (useful when sharing a GPU, or between train and val epochs with different shapes);
    it does not make more memory available to this process. Nothing happens in a process that
    does not use CUDA. Each flag covers both train and val epochs/iterations.

    Args:
        before_epoch: Release before every epoch.
        after_epoch: Release after every epoch.
        after_iter: Release after every iteration (slows training down).
    """

    def __init__(
        self, before_epoch: bool = False, after_epoch: bool = True, after_iter: bool = False
    ) -> None:
        self._before_epoch = before_epoch
        self._after_epoch = after_epoch
        self._after_iter = after_iter

    def before_epoch(self, runner: RunnerLike) -> None:
        """Release the cache if ``before_epoch`` is set."""
        if self._before_epoch:
            _release_cuda_cache()

    def after_epoch(self, runner: RunnerLike) -> None:
        """Release the cache if ``after_epoch`` is set."""
        if self._after_epoch:
            _release_cuda_cache()

    def after_iter(self, runner: RunnerLike) -> None:
        """Release the cache if ``after_iter`` is set."""
        if self._after_iter:
            _release_cuda_cache()
