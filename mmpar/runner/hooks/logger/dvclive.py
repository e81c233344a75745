"""DvcliveLoggerHook: metrics (and optionally the model file) with DVCLive."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..hook import HOOKS
from .base import LoggerHook, import_tracker


@HOOKS.register_module()
class DvcliveLoggerHook(LoggerHook):
    """Log every record's scalars with a ``dvclive.Live`` logger, on rank 0 only.

    DVCLive writes one ``plots/metrics/<tag>.tsv`` per tag and the latest values to
    ``metrics.json`` in its directory (``Live``'s ``dir``, ``'dvclive'`` by default). Tags are
    ``train/<var>``, ``val/<metric>``, ``learning_rate`` and ``momentum``.

    With ``by_epoch`` the DVCLive step is the 1-based epoch: the records of an epoch are merged
    (the last train record of the epoch and the evaluation results) and written once when the
    epoch ends. Otherwise each record is written at the global optimizer step
    (:meth:`LoggerHook.get_step`). ``dvclive`` is imported when the hook is built
    (``pip install dvclive``); the ``Live`` logger is created on rank 0 in :meth:`before_run`
    and ended in :meth:`after_run` (a ``Live`` passed in is used as is and left open).

    Args:
        model_file: If set, save a checkpoint to this path after every train epoch
            (overwritten each epoch).
        interval, ignore_last, reset_flag: As :class:`LoggerHook`.
        by_epoch: One DVCLive step per epoch (see above), and count ``interval`` within epochs.
        dvclive: A ``dvclive.Live`` to log to instead of creating one.
        **kwargs: Arguments of ``dvclive.Live`` (``dir``, ``save_dvc_exp``, ``report``, ...),
            unused if ``dvclive`` is given.

    Raises:
        ImportError: dvclive is not installed.
    """

    def __init__(
        self,
        model_file: str | None = None,
        interval: int = 10,
        ignore_last: bool = True,
        reset_flag: bool = False,
        by_epoch: bool = True,
        dvclive: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(interval, ignore_last, reset_flag, by_epoch)
        self.model_file = model_file
        self._live_cls = import_tracker("dvclive", "dvclive", type(self).__name__).Live
        self._live_kwargs = kwargs
        self._own_live = dvclive is None
        self.dvclive = dvclive
        self._epoch_tags: dict[str, Any] = {}

    def before_run(self, runner: Any) -> None:
        """Create the ``Live`` logger on rank 0 (unless one was passed in)."""
        super().before_run(runner)
        if runner.rank == 0 and self.dvclive is None:
            self.dvclive = self._live_cls(**self._live_kwargs)

    def log(self, runner: Any) -> None:
        """Write the record (or, with ``by_epoch``, keep it for the epoch's step)."""
        if runner.rank != 0 or self.dvclive is None:
            return
        tags = self.get_record_tags(runner)
        if self.by_epoch:
            self._epoch_tags.update(tags)
        elif tags:
            self._write(self.get_step(runner), tags)

    def _write(self, step: int, tags: dict[str, Any]) -> None:
        self.dvclive.step = step
        for name, value in tags.items():
            self.dvclive.log_metric(name, value)
        self.dvclive.make_summary()

    def _flush_epoch(self, runner: Any) -> None:
        if self._epoch_tags and self.dvclive is not None:
            self._write(self.get_epoch(runner), self._epoch_tags)
        self._epoch_tags = {}

    def after_train_epoch(self, runner: Any) -> None:
        """Log epoch-end results, save ``model_file``, write the epoch's step."""
        super().after_train_epoch(runner)
        if self.model_file is not None and runner.rank == 0:
            path = Path(self.model_file)
            runner.save_checkpoint(str(path.parent), filename_tmpl=path.name, create_symlink=False)
        self._flush_epoch(runner)

    def after_val_epoch(self, runner: Any) -> None:
        """Log the val epoch and write the epoch's step."""
        super().after_val_epoch(runner)
        self._flush_epoch(runner)

    def after_run(self, runner: Any) -> None:
        """Write what is left and end the ``Live`` logger this hook created."""
        if self.dvclive is None:
            return
        self._flush_epoch(runner)
        if self._own_live:
            self.dvclive.end()
            self.dvclive = None
