"""Signals from inside a training run, for the preemption and run-guard tests."""

from __future__ import annotations

import os
import signal

from mmpar.runner import Hook


class SendSignal(Hook):
    """Send ``signum`` to this process in ``after_train_iter`` of global iteration ``at``.

    Args:
        at: The 1-based global iteration after which the signal is sent.
        signum: The signal.
        times: How many times it is sent (a second one tests the default action).
    """

    def __init__(self, at: int, signum: int = signal.SIGTERM, times: int = 1) -> None:
        self.at, self.signum, self.times = at, signum, times

    def after_train_iter(self, runner) -> None:
        if runner.iter + 1 == self.at:
            for _ in range(self.times):
                os.kill(os.getpid(), self.signum)
