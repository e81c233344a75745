"""SegmindLoggerHook: metrics to Segmind's tracking (its MLflow-based API)."""

from __future__ import annotations

from typing import Any

from ..hook import HOOKS
from .base import LoggerHook, import_tracker


@HOOKS.register_module()
class SegmindLoggerHook(LoggerHook):
    """Log every record's scalars with ``segmind.tracking.fluent.log_metrics``, on rank 0 only.

    The values go through ``segmind.utils.logging_utils.try_mlflow_log`` with
    ``step=epoch=runner.epoch``, as mmcv does. ``segmind`` is imported when the hook is built
    (``pip install segmind``); the Segmind project/credentials are set up with Segmind's own
    tools beforehand.

    Args:
        interval, ignore_last, reset_flag, by_epoch: As :class:`LoggerHook`.

    Raises:
        ImportError: segmind is not installed.
    """

    def __init__(
        self,
        interval: int = 10,
        ignore_last: bool = True,
        reset_flag: bool = False,
        by_epoch: bool = True,
    ) -> None:
        super().__init__(interval, ignore_last, reset_flag, by_epoch)
        self.import_segmind()

    def import_segmind(self) -> None:
        """Import segmind's ``log_metrics`` and ``try_mlflow_log``."""
        name = type(self).__name__
        import_tracker("segmind", "segmind", name)
        self.log_metrics = import_tracker("segmind.tracking.fluent", "segmind", name).log_metrics
        logging_utils = import_tracker("segmind.utils.logging_utils", "segmind", name)
        self.mlflow_log = logging_utils.try_mlflow_log

    def log(self, runner: Any) -> None:
        """Send the record's scalars (rank 0)."""
        if runner.rank != 0:
            return
        tags = self.get_record_tags(runner)
        if tags:
            self.mlflow_log(self.log_metrics, tags, step=runner.epoch, epoch=runner.epoch)
