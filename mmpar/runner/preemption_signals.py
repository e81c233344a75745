"""The plumbing of :class:`~mmpar.runner.hooks.PreemptionHook`: signal flag and rank agreement.

- :func:`parse_signals` turns ``('SIGTERM', 'USR1', 10, signal.SIGINT)`` into signals.
- :class:`SignalFlag` installs handlers that only record the first signal and give every
  listed signal back its default action (so a second one ends the process at once), and puts
  the previous handlers back.
- :class:`StopAgreement` makes all ranks of a distributed job decide to stop after the same
  iteration: one asynchronous ``all_reduce(MAX)`` of the local flag per check on a dedicated
  gloo group, whose result is read at the next check.
"""

from __future__ import annotations

import signal
from datetime import timedelta
from types import FrameType
from typing import Any, Sequence, Union

import torch
import torch.distributed as dist

SignalSpec = Union[str, int, signal.Signals]
UNCATCHABLE = ("SIGKILL", "SIGSTOP")


def parse_signals(signals: Sequence[SignalSpec], owner: str = "PreemptionHook") -> tuple:
    """Return the :class:`signal.Signals` named by ``signals`` (duplicates dropped, in order).

    Args:
        signals: Names (``'SIGTERM'`` or ``'TERM'``, any case), numbers or ``signal.Signals``.
        owner: Names the caller in error messages.

    Raises:
        TypeError: ``signals`` is a single string or not a sequence, or an item is neither a
            str nor an int.
        ValueError: An unknown name or number, or SIGKILL/SIGSTOP (they cannot be caught).
    """
    if isinstance(signals, (str, bytes)) or not isinstance(signals, Sequence):
        raise TypeError(
            f"{owner}: signals must be a list of signal names such as ['SIGTERM', 'SIGUSR1'], "
            f"got {signals!r}"
        )
    known = sorted(s.name for s in signal.Signals if s.name.startswith("SIG") and "_" not in s.name)
    out: list[signal.Signals] = []
    for item in signals:
        if isinstance(item, bool) or not isinstance(item, (str, int)):
            raise TypeError(f"{owner}: a signal must be a name or a number, got {item!r}")
        try:
            if isinstance(item, str):
                name = item.upper()
                sig = signal.Signals[name if name.startswith("SIG") else f"SIG{name}"]
            else:
                sig = signal.Signals(item)
        except (KeyError, ValueError):
            raise ValueError(
                f"{owner}: unknown signal {item!r}; known signals: {', '.join(known)}"
            ) from None
        if sig.name in UNCATCHABLE:
            raise ValueError(f"{owner}: {sig.name} cannot be caught; use SIGTERM or SIGUSR1")
        if sig not in out:
            out.append(sig)
    if not out:
        raise ValueError(f"{owner}: signals is empty; list at least one, e.g. ['SIGTERM']")
    return tuple(out)


class SignalFlag:
    """Handlers that record the first signal received and nothing else.

    The handler stores the signal in :attr:`received` and sets every listed signal back to its
    default action (``SIG_DFL``): the process keeps running until it checks the flag, and a
    second signal ends it at once, as if no handler had been installed.

    Args:
        signals: The signals to handle.
    """

    def __init__(self, signals: Sequence[signal.Signals]) -> None:
        self.signals = tuple(signals)
        self.received: signal.Signals | None = None
        self._previous: dict[signal.Signals, Any] = {}

    def install(self) -> None:
        """Install the handlers (main thread only: ``signal.signal`` raises elsewhere)."""
        for sig in self.signals:
            self._previous[sig] = signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signal.Signals(signum)
        for sig in self.signals:
            signal.signal(sig, signal.SIG_DFL)

    def restore(self) -> None:
        """Put back the handlers that were installed before :meth:`install`."""
        while self._previous:
            sig, handler = self._previous.popitem()
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


class StopAgreement:
    """Agree across ranks whether to stop, on a gloo group of its own.

    A rank's flag is the number of the signal it received (0: none); the ranks share
    ``all_reduce(MAX)`` of them, so every rank also learns a signal's name.
    :meth:`poll` is the cheap per-iteration check: it waits for the reduction of the flags
    launched by the previous poll (long finished, normally: the reduction of a few bytes
    ran during the last iteration) and returns its result, then launches the next one. A
    signal is thus acted on one iteration after it is seen, by every rank at the same
    iteration. :meth:`agree` is the blocking check (at the end of an epoch). Every rank must
    call the same methods in the same order; the gloo group keeps these small CPU reductions
    apart from the training's own collectives (and works when those use nccl).

    Create it on every rank at the same point (it calls ``dist.new_group``).
    """

    def __init__(self) -> None:
        self.group = dist.new_group(backend="gloo")
        self._pending: tuple[Any, torch.Tensor] | None = None

    def _launch(self, flag: int, async_op: bool) -> tuple[Any, torch.Tensor]:
        tensor = torch.tensor([flag], dtype=torch.int32)
        work = dist.all_reduce(tensor, op=dist.ReduceOp.MAX, group=self.group, async_op=async_op)
        return work, tensor

    def _wait_pending(self, timeout: timedelta | None = None) -> int:
        if self._pending is None:
            return 0
        (work, tensor), self._pending = self._pending, None
        if timeout is None:
            work.wait()
        else:
            work.wait(timeout)
        return int(tensor.item())

    def poll(self, flag: int) -> int:
        """Return the largest flag of all ranks at the previous poll (0: none); share ``flag``.

        Once the answer is non-zero no new reduction is launched (every rank gets the same
        answer).
        """
        agreed = self._wait_pending()
        if not agreed:
            self._pending = self._launch(flag, async_op=True)
        return agreed

    def agree(self, flag: int) -> int:
        """Return the largest flag of all ranks now (or at the previous poll; 0: none)."""
        agreed = self._wait_pending()
        if agreed:
            return agreed
        _, tensor = self._launch(flag, async_op=False)
        return int(tensor.item())

    def barrier(self) -> None:
        """Wait until every rank got here (on the gloo group)."""
        dist.barrier(group=self.group)

    def drain(self, timeout: float = 60.0) -> None:
        """Wait for a reduction still in flight (at the end of the run)."""
        self._wait_pending(timedelta(seconds=timeout))
