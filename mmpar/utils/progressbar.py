r"""Progress bars for loops and process pools (mmcv 1.x ``mmcv.utils.progressbar``).

The text is mmcv's, character for character, since code and tests written for mmcv read it:
``start`` writes ``[<spaces>] 0/N, elapsed: 0s, ETA:``, each ``update`` rewrites the line
(``\r``) as ``[>>>   ] 3/10, 1.2 task/s, elapsed: 2s, ETA:     5s``; without a task count,
``completed: 0, elapsed: 0s`` then ``completed: 3, elapsed: 2s, 1.5 tasks/s`` appended to it.
The bar shrinks to fit the terminal (``shutil.get_terminal_size``, which reads ``COLUMNS`` and
falls back to 80 columns without a terminal). The ``track_*`` functions end the line.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from multiprocessing import Pool
from shutil import get_terminal_size
from typing import IO, TYPE_CHECKING, Any, Callable, Union

from .compat_errors import CheckTypeError, CheckValueError
from .timer import Timer

if TYPE_CHECKING:
    from multiprocessing.pool import Pool as PoolType

Tasks = Union[Iterable, tuple[Iterable, int]]


class ProgressBar:
    """A progress bar for ``task_num`` tasks (a counter when ``task_num`` is 0).

    As in mmcv, the bar does not end its line; call :meth:`close` (the ``track_*`` functions
    do) before printing anything else.

    Args:
        task_num: Number of tasks; 0 if unknown.
        bar_width: Largest width of the bar in characters.
        start: Show the bar now; otherwise call :meth:`start` (or :meth:`update`) later.
        file: Stream to draw on; the current ``sys.stdout`` when None.

    Attributes:
        completed: Number of tasks reported done so far.
        timer: A :class:`~mmpar.utils.Timer` started by :meth:`start`.
    """

    def __init__(
        self,
        task_num: int = 0,
        bar_width: int = 50,
        start: bool = True,
        file: IO[str] | None = None,
    ) -> None:
        self.task_num = task_num
        self.bar_width = bar_width
        self.completed = 0
        self.file = sys.stdout if file is None else file
        self._line_open = False
        if start:
            self.start()

    @property
    def terminal_width(self) -> int:
        """Width of the terminal in columns (``COLUMNS``, else the terminal's, else 80)."""
        width, _ = get_terminal_size()
        return width

    def start(self) -> None:
        """Write the empty bar and (re)start :attr:`timer`."""
        if self.task_num > 0:
            self.file.write(f"[{' ' * self.bar_width}] 0/{self.task_num}, elapsed: 0s, ETA:")
        else:
            self.file.write("completed: 0, elapsed: 0s")
        self.file.flush()
        self._line_open = True
        self.timer = Timer()

    def update(self, num_tasks: int = 1) -> None:
        """Count ``num_tasks`` more tasks as done and redraw.

        Args:
            num_tasks: How many tasks finished; must be positive.

        Raises:
            ValueError: ``num_tasks`` is not positive (also an AssertionError, as in mmcv).
        """
        if not num_tasks > 0:
            raise CheckValueError(f"ProgressBar.update: num_tasks must be > 0, got {num_tasks!r}")
        if not hasattr(self, "timer"):  # mmcv needs start() first; we start here instead
            self.start()
        self.completed += num_tasks
        elapsed = self.timer.since_start()
        rate = self.completed / elapsed if elapsed > 0 else float("inf")
        seconds = int(elapsed + 0.5)
        if self.task_num > 0:
            self.file.write(self._bar_line(elapsed, rate, seconds))
        else:
            self.file.write(f"completed: {self.completed}, elapsed: {seconds}s, {rate:.1f} tasks/s")
        self.file.flush()
        self._line_open = True

    def _bar_line(self, elapsed: float, rate: float, seconds: int) -> str:
        fraction = self.completed / float(self.task_num)
        eta = int(elapsed * (1 - fraction) / fraction + 0.5)
        tail = f"] {self.completed}/{self.task_num}, {rate:.1f} task/s, elapsed: {seconds}s, "
        tail += f"ETA: {eta:5}s"
        # The bar takes what the text leaves of the line, at most bar_width and 60% of the
        # terminal, never less than 2 characters.
        columns = self.terminal_width
        fixed = len("\r[") + len(tail)
        width = max(2, min(self.bar_width, columns - fixed, int(columns * 0.6)))
        marks = int(width * fraction)
        return f"\r[{'>' * marks}{' ' * (width - marks)}{tail}"

    def close(self) -> None:
        """End the bar's line with a newline (once; later updates continue on the next line)."""
        if self._line_open:
            self.file.write("\n")
            self.file.flush()
            self._line_open = False


def _split_tasks(tasks: Tasks) -> tuple[Iterable, int]:
    """Return (iterable of tasks, number of tasks) from a list or an ``(iterable, n)`` pair."""
    if isinstance(tasks, tuple):
        if len(tasks) != 2:
            raise CheckValueError(
                f"tasks given as a tuple must be (iterable of tasks, number of tasks), but it "
                f"has {len(tasks)} items; pass a list to give the tasks themselves"
            )
        iterable, task_num = tasks
        if not isinstance(iterable, Iterable) or not isinstance(task_num, int):
            raise CheckTypeError(
                "tasks given as a tuple must be (iterable of tasks, int number of tasks), "
                f"but got ({type(iterable).__name__}, {type(task_num).__name__})"
            )
        return iterable, task_num
    if isinstance(tasks, Iterable):
        return tasks, len(tasks)  # type: ignore[arg-type]
    raise TypeError(
        f"tasks must be an iterable or an (iterable, int) tuple, but got {type(tasks).__name__}"
    )


def track_progress(
    func: Callable,
    tasks: Tasks,
    bar_width: int = 50,
    file: IO[str] | None = None,
    **kwargs: Any,
) -> list:
    """Call ``func`` on each task in turn, showing progress.

    Args:
        func: Called as ``func(task, **kwargs)``.
        tasks: A list of tasks, or ``(iterable of tasks, number of tasks)``.
        bar_width: Width of the bar.
        file: Stream to draw on; the current ``sys.stdout`` when None.
        **kwargs: Passed to every ``func`` call.

    Returns:
        The results, in task order.
    """
    iterable, task_num = _split_tasks(tasks)
    bar = ProgressBar(task_num, bar_width, file=file)
    results = []
    try:
        for task in iterable:
            results.append(func(task, **kwargs))
            bar.update()
    finally:
        bar.close()
    return results


def init_pool(
    process_num: int, initializer: Callable | None = None, initargs: tuple | None = None
) -> PoolType:
    """Return a :class:`multiprocessing.pool.Pool` of ``process_num`` workers.

    Args:
        process_num: Number of worker processes.
        initializer: Called in each worker when it starts.
        initargs: Arguments for ``initializer``.

    Raises:
        TypeError: ``initargs`` is given but is not a tuple.
    """
    if initargs is not None and not isinstance(initargs, tuple):
        raise TypeError(f"initargs must be a tuple, but got {type(initargs).__name__}")
    if initializer is None:
        return Pool(process_num)
    return Pool(process_num, initializer, initargs or ())


def track_parallel_progress(
    func: Callable,
    tasks: Tasks,
    nproc: int,
    initializer: Callable | None = None,
    initargs: tuple | None = None,
    bar_width: int = 50,
    chunksize: int = 1,
    skip_first: bool = False,
    keep_order: bool = True,
    file: IO[str] | None = None,
) -> list:
    """Run ``func`` on the tasks in a pool of ``nproc`` processes, showing progress.

    Args:
        func: Called as ``func(task)`` in a worker; must be picklable (a module-level function).
        tasks: A list of tasks, or ``(iterable of tasks, number of tasks)``.
        nproc: Number of worker processes.
        initializer: Called in each worker when it starts (see :class:`multiprocessing.Pool`).
        initargs: Arguments for ``initializer`` (a tuple).
        bar_width: Width of the bar.
        chunksize: Tasks sent to a worker at a time.
        skip_first: Start the bar (and its rate) only after the first ``nproc * chunksize``
            results, which include the workers' start-up; those results are not counted.
        keep_order: Return results in task order (``Pool.imap``); otherwise in completion
            order (``Pool.imap_unordered``).
        file: Stream to draw on; the current ``sys.stdout`` when None.

    Returns:
        The results.
    """
    iterable, task_num = _split_tasks(tasks)
    pool = init_pool(nproc, initializer, initargs)
    skipped = nproc * chunksize if skip_first else 0
    bar = ProgressBar(task_num - skipped, bar_width, start=not skip_first, file=file)
    results = []
    try:
        imap = pool.imap if keep_order else pool.imap_unordered
        for result in imap(func, iterable, chunksize):
            results.append(result)
            if len(results) < skipped:
                continue
            if len(results) == skipped:
                bar.start()
                continue
            bar.update()
    except BaseException:
        pool.terminate()
        raise
    else:
        pool.close()
    finally:
        bar.close()
        pool.join()
    return results


def track_iter_progress(tasks: Tasks, bar_width: int = 50, file: IO[str] | None = None) -> Iterator:
    """Yield each task, counting it as done when the loop asks for the next one.

    Args:
        tasks: A list of tasks, or ``(iterable of tasks, number of tasks)``.
        bar_width: Width of the bar.
        file: Stream to draw on; the current ``sys.stdout`` when None.

    Yields:
        The tasks, in order.
    """
    iterable, task_num = _split_tasks(tasks)
    bar = ProgressBar(task_num, bar_width, file=file)
    try:
        for task in iterable:
            yield task
            bar.update()
    finally:
        bar.close()


__all__ = [
    "ProgressBar",
    "init_pool",
    "track_iter_progress",
    "track_parallel_progress",
    "track_progress",
]
