"""TensorboardLoggerHook: scalars and text to TensorBoard event files."""

from __future__ import annotations

import os.path as osp
from typing import Any

# mmcv's module imports these too; projects import them from here.
from mmpar.utils import TORCH_VERSION as TORCH_VERSION
from mmpar.utils import digit_version as digit_version
from mmpar.utils.dist import master_only as master_only

from ...runner_protocol import RunnerLike
from ..hook import HOOKS
from .base import LoggerHook


@HOOKS.register_module()
class TensorboardLoggerHook(LoggerHook):
    """Write records to TensorBoard with ``torch.utils.tensorboard.SummaryWriter``.

    Tags are ``train/<var>`` and ``val/<metric>``, plus ``learning_rate`` and ``momentum``
    (``learning_rate/<name>`` with a dict of optimizers) on train records. The global step is
    the number of optimizer steps taken (:meth:`LoggerHook.get_step`), so evaluation results
    share the step of the last train record before them. Only rank 0 writes.

    Args:
        log_dir: Directory of the event files; ``<work_dir>/tf_logs`` if ``None``.
        interval, ignore_last, reset_flag, by_epoch: As :class:`LoggerHook`.
    """

    def __init__(
        self,
        log_dir: str | None = None,
        interval: int = 10,
        ignore_last: bool = True,
        reset_flag: bool = False,
        by_epoch: bool = True,
    ) -> None:
        super().__init__(interval, ignore_last, reset_flag, by_epoch)
        self.log_dir = log_dir
        self.writer: Any = None  # a SummaryWriter from before_run on

    def before_run(self, runner: RunnerLike) -> None:
        """Create the SummaryWriter on rank 0."""
        super().before_run(runner)
        if runner.rank != 0:
            return
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as exc:  # tensorboard is a dependency, but may be stripped
            raise ImportError(
                "TensorboardLoggerHook needs the tensorboard package: pip install tensorboard"
            ) from exc
        if self.log_dir is None:
            self.log_dir = osp.join(runner.work_dir, "tf_logs")
        self.writer = SummaryWriter(self.log_dir)

    def log(self, runner: RunnerLike) -> None:
        """Write every scalar (and text) of the current record at the current global step."""
        if runner.rank != 0 or self.writer is None:
            return
        tags = self.get_record_tags(runner, allow_text=True)
        step = self.get_step(runner)
        for tag, val in tags.items():
            if isinstance(val, str):
                self.writer.add_text(tag, val, step)
            else:
                self.writer.add_scalar(tag, val, step)

    def after_run(self, runner: RunnerLike) -> None:
        """Flush and close the writer (also when training failed)."""
        if self.writer is not None:
            self.writer.close()
            self.writer = None
