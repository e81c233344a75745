"""ClearMLLoggerHook: metrics as scalars of a ClearML task."""

from __future__ import annotations

from typing import Any

from mmpar.utils.dist import master_only

from ...runner_protocol import RunnerLike
from ..hook import HOOKS
from .base import LoggerHook, import_tracker


@HOOKS.register_module()
class ClearMLLoggerHook(LoggerHook):
    """Report every record's values to a ClearML task, on rank 0, with mmcv 1.7.2's calls.

    :meth:`before_run` calls ``clearml.Task.init(**init_kwargs)`` (which returns the current
    task if the script already started one) and ``task.get_logger()``; each value is reported
    with ``report_scalar(tag, tag, value, runner.iter + 1)``. ClearML sends reports in the
    background and flushes them when the task closes or the process exits. ``clearml`` is
    imported when the hook is built (``pip install clearml``).

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

    @master_only
    def before_run(self, runner: RunnerLike) -> None:
        """Create (or get) the task and its logger (rank 0)."""
        super().before_run(runner)
        self.task = self.clearml.Task.init(**(self.init_kwargs or {}))
        self.task_logger = self.task.get_logger()

    @master_only
    def log(self, runner: RunnerLike) -> None:
        """Report the record's values (rank 0)."""
        for tag, value in self.get_loggable_tags(runner).items():
            self.task_logger.report_scalar(tag, tag, value, self.get_iter(runner))
