"""The plumbing of :class:`~mmpar.runner.hooks.PreemptionHook`: signal flag and rank agreement.

- :func:`parse_signals` turns ``('SIGTERM', 'USR1', 10, signal.SIGINT)`` into signals.
- :class:`SignalFlag` installs handlers that only record the first signal (and call an
  optional callback) and give every listed signal back its default action (so a second one
  ends the process at once), and puts the previous handlers back.
- :class:`StopAgreement` makes all ranks of a distributed job decide to stop after the same
  iteration: one asynchronous ``all_reduce(MAX)`` of the local flag per exchange on a
  dedicated gloo group, whose result is read at the next exchange; exchanges are spaced so
  that they happen about every ``sync_interval`` seconds of training.
"""

from __future__ import annotations

import signal
import time
from datetime import timedelta
from types import FrameType
from typing import Any, Callable, Sequence, Union

import torch
import torch.distributed as dist

SignalSpec = Union[str, int, signal.Signals]
UNCATCHABLE = ("SIGKILL", "SIGSTOP")
MAX_GAP = 1000  # iterations between two flag exchanges, at most


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
        on_first: Called with the first signal, from the handler (in the main thread, between
            two Python instructions); it should only write a line.
    """

    def __init__(
        self,
        signals: Sequence[signal.Signals],
        on_first: Callable[[signal.Signals], None] | None = None,
    ) -> None:
        self.signals = tuple(signals)
        self.on_first = on_first
        self.received: signal.Signals | None = None
        self._previous: dict[signal.Signals, Any] = {}

    def install(self) -> None:
        """Install the handlers (main thread only: ``signal.signal`` raises elsewhere)."""
        for sig in self.signals:
            self._previous[sig] = signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        first = self.received is None
        if first:
            self.received = signal.Signals(signum)
        for sig in self.signals:
            signal.signal(sig, signal.SIG_DFL)
        if first and self.on_first is not None:
            self.on_first(self.received)

    def restore(self) -> None:
        """Put back the handlers that were installed before :meth:`install`."""
        while self._previous:
            sig, handler = self._previous.popitem()
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


class StopAgreement:
    """Agree across ranks whether to stop, on a gloo group of its own.

    A rank's flag is the number of the signal it received (0: none); the ranks share
    ``all_reduce(MAX)`` of ``[flag, gap]``, so every rank also learns a signal's name.
    :meth:`poll`, called after every iteration, exchanges the flags only every ``gap``
    iterations: it waits for the reduction launched by the previous exchange (long finished,
    normally: a few bytes, reduced while the last iterations ran) and returns its result,
    then launches the next one. Rank 0 proposes ``gap`` in that same reduction, from its
    iteration time, so that exchanges come about every ``sync_interval`` seconds; every rank
    reads the same proposal at the same exchange, so all exchange (and stop) at the same
    iterations. A signal is acted on at most two exchanges (about ``2 * sync_interval``
    seconds, at least one iteration) after it arrived. ``sync_interval=0``: every iteration.
    :meth:`agree` is the blocking check (at the end of an epoch). Every rank must call the
    same methods in the same order; the gloo group keeps these small CPU reductions apart
    from the training's own collectives (and works when those use nccl).

    Create it on every rank at the same point (it calls ``dist.new_group``).

    Args:
        sync_interval: Seconds of training between two exchanges, about (0: every iteration).
        clock: Rank 0's clock for the iteration time (a test may pass its own).
    """

    def __init__(self, sync_interval: float = 0.0, clock=time.perf_counter) -> None:
        self.group = dist.new_group(backend="gloo")
        self.sync_interval = sync_interval
        self.gap = 1  # iterations between exchanges: the same on every rank
        self._countdown = 1
        self._pending: tuple[Any, torch.Tensor] | None = None
        self._proposes = sync_interval > 0 and dist.get_rank() == 0
        self._clock = clock
        self._last_launch: float | None = None
        self._iters_since_launch = 0

    def _proposal(self) -> int:
        """Rank 0's gap for the exchanges to come, from its iteration time (0: no change)."""
        if not self._proposes:
            return 0
        now = self._clock()
        last, self._last_launch = self._last_launch, now
        iters, self._iters_since_launch = self._iters_since_launch, 0
        if last is None or iters == 0:
            return 0
        per_iter = (now - last) / iters
        if per_iter <= 0:
            return MAX_GAP
        return max(1, min(MAX_GAP, round(self.sync_interval / per_iter)))

    def _launch(self, flag: int, async_op: bool) -> tuple[Any, torch.Tensor]:
        tensor = torch.tensor([flag, self._proposal()], dtype=torch.int64)
        work = dist.all_reduce(tensor, op=dist.ReduceOp.MAX, group=self.group, async_op=async_op)
        return work, tensor

    def _read(self, tensor: torch.Tensor) -> int:
        """Take the agreed gap (if rank 0 proposed one) and return the agreed flag."""
        flag, gap = (int(v) for v in tensor.tolist())
        if gap > 0:
            self.gap = gap
        return flag

    def _wait_pending(self, timeout: timedelta | None = None) -> int:
        if self._pending is None:
            return 0
        (work, tensor), self._pending = self._pending, None
        if timeout is None:
            work.wait()
        else:
            work.wait(timeout)
        return self._read(tensor)

    def poll(self, flag: int) -> int:
        """After an iteration: the largest flag of all ranks at the previous exchange (0: none).

        Exchanges (waits for the previous reduction and shares ``flag``) every :attr:`gap`
        calls only; in between it returns 0 at once. Once the answer is non-zero no new
        reduction is launched (every rank gets the same answer).
        """
        self._iters_since_launch += 1
        self._countdown -= 1
        if self._countdown > 0:
            return 0
        agreed = self._wait_pending()
        self._countdown = self.gap
        if not agreed:
            self._pending = self._launch(flag, async_op=True)
        return agreed

    def agree(self, flag: int) -> int:
        """Return the largest flag of all ranks now (or at the previous exchange; 0: none)."""
        agreed = self._wait_pending()
        if agreed:
            return agreed
        _, tensor = self._launch(flag, async_op=False)
        return self._read(tensor)

    def barrier(self) -> None:
        """Wait until every rank got here (on the gloo group)."""
        dist.barrier(group=self.group)

    def drain(self, timeout: float = 60.0) -> None:
        """Wait for a reduction still in flight (at the end of the run)."""
        self._wait_pending(timedelta(seconds=timeout))
