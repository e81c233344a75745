"""SegmindLoggerHook: metrics to Segmind's tracking (its MLflow-based API)."""

from __future__ import annotations

from mmpar.utils.dist import master_only

from ...runner_protocol import RunnerLike
from ..hook import HOOKS
from .base import LoggerHook, import_tracker


@HOOKS.register_module()
class SegmindLoggerHook(LoggerHook):
    """Log every record's values with ``segmind.tracking.fluent.log_metrics``, on rank 0 only.

    The values go through ``segmind.utils.logging_utils.try_mlflow_log(log_metrics, tags,
    step=runner.epoch, epoch=runner.epoch)``, as mmcv 1.7.2 does. ``segmind`` is imported when
    the hook is built (``pip install segmind``); the Segmind project/credentials are set up with
    Segmind's own tools beforehand.

    Args:
        interval, ignore_last, reset_flag, by_epoch: As :class:`LoggerHook`.

    Raises:
        ImportError: segmind is not installed.
    """

    def _import_tracker(self) -> None:
        self.import_segmind()

    def import_segmind(self) -> None:
        """Import segmind's ``log_metrics`` and ``try_mlflow_log`` (attributes of ``segmind``)."""
        name = type(self).__name__
        segmind = import_tracker("segmind", "segmind", name)
        try:
            fluent, logging_utils = segmind.tracking.fluent, segmind.utils.logging_utils
        except AttributeError:  # a segmind whose __init__ does not import its submodules
            fluent = import_tracker("segmind.tracking.fluent", "segmind", name)
            logging_utils = import_tracker("segmind.utils.logging_utils", "segmind", name)
        self.log_metrics = fluent.log_metrics
        self.mlflow_log = logging_utils.try_mlflow_log

    @master_only
    def log(self, runner: RunnerLike) -> None:
        """Send the record's values (rank 0)."""
        tags = self.get_loggable_tags(runner)
        if tags:
            self.mlflow_log(self.log_metrics, tags, step=runner.epoch, epoch=runner.epoch)
