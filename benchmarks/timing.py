"""Timing shared by the ops benchmarks: the median of a few calls after a warm-up."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_ms(fn: Callable[[], object], repeats: int = 5) -> float:
    """Median wall time of ``fn`` in milliseconds over ``repeats`` calls, after one warm-up call.

    Args:
        fn: The call to time (it must finish its work before returning).
        repeats: Timed calls.

    Returns:
        The median, in milliseconds.
    """
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3
