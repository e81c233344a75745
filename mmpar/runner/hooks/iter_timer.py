"""IterTimerHook: records ``data_time`` and ``time`` per iteration in the log buffer."""

from __future__ import annotations

import time

from ..runner_protocol import RunnerLike
from .hook import HOOKS, Hook


@HOOKS.register_module()
class IterTimerHook(Hook):
    """Log ``data_time`` (waiting for the batch) and ``time`` (whole iteration), in seconds.

    Registered at LOW priority by default.
    What it may use of the runner: :class:`~mmpar.runner.runner_protocol.RunnerLike`.
    """

    def __init__(self) -> None:
        self.t = time.perf_counter()

    def before_epoch(self, runner: RunnerLike) -> None:
        """Start the clock at the beginning of an epoch."""
        self.t = time.perf_counter()

    def before_iter(self, runner: RunnerLike) -> None:
        """Record the time spent waiting for the batch."""
        runner.log_buffer.update({"data_time": time.perf_counter() - self.t})

    def after_iter(self, runner: RunnerLike) -> None:
        """Record the iteration time and restart the clock."""
        now = time.perf_counter()
        runner.log_buffer.update({"time": now - self.t})
        self.t = now
