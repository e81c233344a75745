"""ClearMLLoggerHook: metrics as scalars of a ClearML task."""

from __future__ import annotations

from typing import Any

from ..hook import HOOKS
from .base import LoggerHook, import_tracker


@HOOKS.register_module()
class ClearMLLoggerHook(LoggerHook):
    """Report every record's scalars to a ClearML task, on rank 0 only.

    :meth:`before_run` calls ``clearml.Task.init(**init_kwargs)`` (which returns the current
    task if the script already started one); each scalar is reported with
    ``report_scalar(title=tag, series=tag, value, iteration=step)`` at the global optimizer step
    (:meth:`LoggerHook.get_step`). ``clearml`` is imported when the hook is built
    (``pip install clearml``).

    Args:
        init_kwargs: Keyword arguments of ``clearml.Task.init`` (``project_name``,
            ``task_name``, ...).
        interval, ignore_last, reset_flag, by_epoch: As :class:`LoggerHook`.

    Raises:
        ImportError: clearml is not installed.
    """

    def __init__(
        self,
        init_kwargs: dict | None = None,
        interval: int = 10,
        ignore_last: bool = True,
        reset_flag: bool = False,
        by_epoch: bool = True,
    ) -> None:
        super().__init__(interval, ignore_last, reset_flag, by_epoch)
        self.import_clearml()
        self.init_kwargs = init_kwargs
        self.task: Any = None
        self.task_logger: Any = None

    def import_clearml(self) -> None:
        """Import ``clearml`` (as ``self.clearml``)."""
        self.clearml = import_tracker("clearml", "clearml", type(self).__name__)

    def before_run(self, runner: Any) -> None:
        """Create (or get) the task and its logger (rank 0)."""
        super().before_run(runner)
        if runner.rank == 0:
            self.task = self.clearml.Task.init(**(self.init_kwargs or {}))
            self.task_logger = self.task.get_logger()

    def log(self, runner: Any) -> None:
        """Report the record's scalars (rank 0)."""
        if self.task_logger is None:
            return
        step = self.get_step(runner)
        for tag, value in self.get_record_tags(runner).items():
            self.task_logger.report_scalar(tag, tag, value, step)

    def after_run(self, runner: Any) -> None:
        """Flush the reported scalars (the task stays open, as ClearML tasks do)."""
        if self.task_logger is not None:
            self.task_logger.flush()
