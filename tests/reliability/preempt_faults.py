"""Real preemption signals for ``test_preemption.py``, loaded by ``preempt_digits_config.py``.

The config registers :class:`SignalFaultHook` (at ``BELOW_NORMAL``: after the optimizer step
and the checkpoint hook, before the evaluation, the loggers and the PreemptionHook) and puts
:class:`SignalFaultPoint` first in the val pipeline. Inert unless ``--cfg-options`` arms the
hook (``custom_hooks.0.point=...``):

``point=<stage> at=<n>``
    Send the signal in hook stage ``<stage>`` (e.g. ``after_train_iter``) of global iteration
    ``n`` (1-based).
``point=val at=<n>``
    Send it when the val pipeline prepares its ``n``-th sample (during an evaluation).
``point=save pattern=<glob>``
    Send it inside ``torch.save`` of the checkpoint whose final name matches ``<glob>``, then
    write the file.
``point=wait at=<n>``
    In ``after_train_iter`` of iteration ``n``, print ``READY`` and block until a signal
    arrives from outside (the test sends it), then go on; with ``times=2``, until a second one
    arrives (the test of a double Ctrl-C: the second must end the process at once).

``signal`` (default SIGTERM) is sent ``times`` times (2: the second must kill at once) to this
process, or with ``target=parent`` to the parent (the torchrun agent, which forwards it to
every worker); ``rank=<r>`` sends from rank ``r`` only. Before sending, the plugin prints
``SIGNAL <name> <unix time>`` to stderr; when armed, every rank prints
``STOPPED rank=<r> iter=<n>`` (iterations completed) at the end of the run.
"""

from __future__ import annotations

import fnmatch
import os
import select
import signal
import sys
import time
from typing import Any

import torch
from kill_faults import _target_name

from mmpar.datasets import PIPELINES
from mmpar.runner import HOOKS, Hook
from mmpar.utils.dist import get_dist_info

ARMED: dict = {}  # the armed hook's settings, read by SignalFaultPoint too


def report(line: str) -> None:
    """Write ``line`` to stderr in one ``write`` call.

    The ranks share torchrun's stderr; a print writes its text and the newline apart, and
    another rank's output can come in between.
    """
    sys.stderr.flush()
    os.write(2, f"{line}\n".encode())


def send() -> None:
    """Send the armed signal (``times`` times) to its target, from the armed rank only."""
    if ARMED["rank"] >= 0 and get_dist_info()[0] != ARMED["rank"]:
        return
    sig = signal.Signals[ARMED["signal"]]
    pid = os.getppid() if ARMED["target"] == "parent" else ARMED["main_pid"]
    report(f"SIGNAL {sig.name} {time.time():.6f}")
    for _ in range(ARMED["times"]):
        os.kill(pid, sig)


def wait_for_signal(count: int = 1) -> None:
    """Print READY and return once ``count`` signals arrived (race-free: the wakeup fd)."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    previous = signal.set_wakeup_fd(write_fd)
    try:
        report("READY")
        for _ in range(count):  # a signal that came before this line counts too
            select.select([read_fd], [], [])
            os.read(read_fd, 1)
    finally:
        signal.set_wakeup_fd(previous)
        os.close(read_fd)
        os.close(write_fd)


@HOOKS.register_module()
class SignalFaultHook(Hook):
    """Send a real signal at one point of the run (see the module docstring)."""

    def __init__(
        self,
        point: str = "none",
        at: int = 0,
        pattern: str = "",
        signal: str = "SIGTERM",
        times: int = 1,
        rank: int = -1,
        target: str = "self",
    ) -> None:
        self.point, self.at = point, at
        if point == "none":
            return
        ARMED.update(
            point=point,
            at=at,
            signal=signal,
            times=times,
            rank=rank,
            target=target,
            main_pid=os.getpid(),
        )
        if point == "save":
            _install_save_signal(pattern)
        elif point == "wait":
            self.after_train_iter = self._wait
        elif point in Hook.stages:
            setattr(self, point, self._maybe_send)  # an instance override of that stage
        elif point != "val":
            raise ValueError(f"SignalFaultHook: unknown point {point!r}")

    def _maybe_send(self, runner: Any) -> None:
        if runner.iter + 1 == self.at:
            send()

    def _wait(self, runner: Any) -> None:
        if runner.iter + 1 == self.at:
            wait_for_signal(ARMED["times"])

    def after_run(self, runner: Any) -> None:
        """Report where this rank stopped."""
        if self.point != "none":
            report(f"STOPPED rank={runner.rank} iter={runner.progress['iter']}")


@PIPELINES.register_module()
class SignalFaultPoint:
    """A pass-through val transform that sends the signal at its ``at``-th sample."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, results: dict) -> dict:
        if ARMED.get("point") == "val":
            self.calls += 1
            if self.calls == ARMED["at"]:
                send()
        return results


def _install_save_signal(pattern: str) -> None:
    real_save = torch.save

    def signalling_save(obj: Any, f: Any, *args: Any, **kwargs: Any) -> None:
        if fnmatch.fnmatch(_target_name(f), pattern):
            send()
        return real_save(obj, f, *args, **kwargs)

    torch.save = signalling_save
