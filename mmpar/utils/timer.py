"""A wall-clock timer and named check points (mmcv 1.x ``Timer``, ``check_time``)."""

from __future__ import annotations

from time import perf_counter
from types import TracebackType


class TimerError(Exception):
    """A timer was read before it was started (mmcv 1.x ``TimerError``).

    Args:
        message: What went wrong; also kept as ``self.message``.
    """

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class Timer:
    """Measure elapsed seconds since a start and since the last check.

    Used as a context manager it prints the seconds the block took, formatted with
    ``print_tmpl``.

    Args:
        start: Start the timer now.
        print_tmpl: Format string for the printed seconds; ``'{:.3f}'`` when None.

    Example:
        >>> timer = Timer()
        >>> elapsed = timer.since_start()      # seconds since the start
        >>> lap = timer.since_last_check()     # seconds since the previous check
    """

    def __init__(self, start: bool = True, print_tmpl: str | None = None) -> None:
        self._is_running = False
        self.print_tmpl = print_tmpl or "{:.3f}"
        if start:
            self.start()

    @property
    def is_running(self) -> bool:
        """Whether the timer has been started (and not stopped by leaving a ``with`` block)."""
        return self._is_running

    def __enter__(self) -> Timer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        print(self.print_tmpl.format(self.since_last_check()))
        self._is_running = False

    def start(self) -> None:
        """Start the timer; on a running timer only the last-check point moves to now."""
        now = perf_counter()
        if not self._is_running:
            self._t_start = now
            self._is_running = True
        self._t_last = now

    def _check_running(self) -> None:
        if not self._is_running:
            raise TimerError("timer is not running: call start() (or use Timer(start=True))")

    def since_start(self) -> float:
        """Return the seconds since the start; this counts as a check.

        Raises:
            TimerError: The timer is not running.
        """
        self._check_running()
        self._t_last = perf_counter()
        return self._t_last - self._t_start

    def since_last_check(self) -> float:
        """Return the seconds since the last check (or the start); this counts as a check.

        Raises:
            TimerError: The timer is not running.
        """
        self._check_running()
        now = perf_counter()
        elapsed = now - self._t_last
        self._t_last = now
        return elapsed


_timers: dict[str, Timer] = {}


def check_time(timer_id: str) -> float:
    """Return the seconds since the previous call with the same ``timer_id``.

    The first call for an id starts its timer and returns 0.

    Args:
        timer_id: Names the timer.

    Returns:
        Seconds since the previous check point of this id (0 on the first call).
    """
    timer = _timers.get(timer_id)
    if timer is None:
        _timers[timer_id] = Timer()
        return 0
    return timer.since_last_check()


__all__ = ["Timer", "TimerError", "check_time"]
