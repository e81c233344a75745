"""DvcliveLoggerHook: metrics (and optionally the model file) with DVCLive."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mmpar.utils.dist import get_dist_info, master_only

from ...runner_protocol import RunnerLike
from ..hook import HOOKS
from .base import LoggerHook, import_tracker


@HOOKS.register_module()
class DvcliveLoggerHook(LoggerHook):
    """Log records with a ``dvclive.Live`` logger, on rank 0, as mmcv 1.7.2 does.

    The ``Live`` is created when the hook is built (on rank 0; ``hook.dvclive``). Each record
    sets the step (the 1-based epoch with ``by_epoch``, else ``runner.iter + 1``) and logs every
    tag of :meth:`LoggerHook.get_loggable_tags`. As in mmcv, with ``by_epoch`` the hook logs no
    per-iteration records: it logs what is ready at the end of a train epoch (``EvalHook``
    results, or the last train record when this is the last logger hook) and the val epochs.

    The ``Live`` is called with the API it has: mmcv's (DVCLive < 2, or a stand-in of it)
    ``set_step(step)`` and ``log(tag, value)``, exactly as mmcv; DVCLive >= 2 (which removed
    those) ``live.step = step``, ``log_metric(tag, value)`` and ``make_summary()``, and ``end()``
    after the run for a ``Live`` the hook created. Values land in
    ``<dir>/plots/metrics/<tag>.tsv`` and ``<dir>/metrics.json``. ``dvclive`` is imported when
    the hook is built (``pip install dvclive``).

    Args:
        model_file: If set, save a checkpoint to this path after every train epoch
            (overwritten each epoch).
        interval, ignore_last, reset_flag: As :class:`LoggerHook`.
        by_epoch: Log at the ends of epochs, at the epoch step (see above); otherwise every
            ``interval`` iterations (counted over all iterations) at the global step.
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
        self._epoch_records: dict[str, dict] = {}
        self._import_dvclive(dvclive, **kwargs)

    def _import_dvclive(self, dvclive: Any = None, **kwargs: Any) -> None:
        live_cls = import_tracker("dvclive", "dvclive", type(self).__name__).Live
        self._own_live = dvclive is None
        if dvclive is not None:
            self.dvclive = dvclive
        else:
            # Only rank 0 logs; other ranks creating a Live would race on its directory.
            self.dvclive = live_cls(**kwargs) if get_dist_info()[0] == 0 else None

    @master_only
    def log(self, runner: RunnerLike) -> None:
        """Log the record at the epoch (``by_epoch``) or global step (rank 0)."""
        tags = self.get_loggable_tags(runner)
        if not tags:
            return
        step = self.get_epoch(runner) if self.by_epoch else self.get_iter(runner)
        live = self.dvclive
        if _has_mmcv_api(live):
            live.set_step(step)
            for name, value in tags.items():
                live.log(name, value)
        else:
            live.step = step
            for name, value in tags.items():
                live.log_metric(name, value)
            live.make_summary()

    def after_train_epoch(self, runner: RunnerLike) -> None:
        """Save ``model_file``, then (``by_epoch``) log what is ready at the epoch end."""
        if self.model_file is not None and runner.rank == 0:
            path = Path(self.model_file)
            runner.save_checkpoint(str(path.parent), filename_tmpl=path.name, create_symlink=False)
        if not self.by_epoch:
            return
        records, self._epoch_records = self._epoch_records, {}
        for key in ("train", "val"):
            if key in records:
                self._log_record(runner, records[key])
        super().after_train_epoch(runner)

    def after_train_iter(self, runner: RunnerLike) -> None:
        """Log every ``interval`` iterations when not ``by_epoch`` (as mmcv).

        With ``by_epoch``, mmcv's hook skips the iteration; when it is the last logger hook,
        what the others just logged (a train record, evaluation results) then stays in the
        buffer, and it logs that at the epoch end. This hook keeps the last train record and
        the last evaluation results for the epoch end instead (in that order, each as its own
        record), so the other logger hooks do not see them again.
        """
        if not self.by_epoch:
            super().after_train_iter(runner)
            return
        self._take_pending_val(runner)  # hands evaluation results to the other loggers
        pending, self._pending_val = self._pending_val, None
        if not self.reset_flag:
            return
        if pending is not None:
            self._epoch_records["val"] = dict(pending)
        buf = runner.log_buffer
        if buf.ready and "time" in buf.output:
            self._epoch_records["train"] = dict(buf.output)
            buf.clear_output()

    @master_only
    def after_run(self, runner: RunnerLike) -> None:
        """End a DVCLive >= 2 ``Live`` this hook created (writes its report and experiment)."""
        if self._own_live and self.dvclive is not None and not _has_mmcv_api(self.dvclive):
            self.dvclive.end()


def _has_mmcv_api(live: Any) -> bool:
    """Whether ``live`` has the ``set_step``/``log`` methods mmcv calls (DVCLive < 2)."""
    return callable(getattr(live, "set_step", None)) and callable(getattr(live, "log", None))
