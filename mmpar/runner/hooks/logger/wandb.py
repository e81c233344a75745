"""WandbLoggerHook: metrics (and the run's log files as an artifact) to Weights & Biases."""

from __future__ import annotations

import os
import os.path as osp
import warnings
from typing import Any, Union

from ..hook import HOOKS
from .base import LoggerHook, import_tracker

_SUMMARIES = ("min", "max", "mean", "best", "last", "none")


@HOOKS.register_module()
class WandbLoggerHook(LoggerHook):
    """Log every record's scalars to a wandb run, on rank 0 only.

    :meth:`before_run` calls ``wandb.init(**init_kwargs)`` (so ``WANDB_MODE=offline``,
    ``WANDB_DIR``, ``WANDB_PROJECT`` ... apply as usual) and declares ``define_metric_cfg``;
    :meth:`after_run` uploads the run's log files as an artifact and finishes the run. Tags are
    ``train/<var>``, ``val/<metric>``, ``learning_rate`` and ``momentum``. ``wandb`` is imported
    when the hook is built (``pip install wandb``).

    With ``with_step`` the wandb step is the global optimizer step
    (:meth:`LoggerHook.get_step`). An evaluation result has the step of the train record before
    it, and wandb drops a value logged at a step it has already committed, so records are sent
    with ``commit=False``: wandb merges the records of one step into one history row and writes
    it when a later step arrives or the run finishes. Without ``with_step``, each record is one
    ``wandb.log(tags, commit=commit)`` call with the step in a ``global_step`` key.

    Args:
        init_kwargs: Keyword arguments of ``wandb.init`` (project, name, config, mode, dir, ...).
        interval, ignore_last, reset_flag: As :class:`LoggerHook`.
        commit: ``commit`` of ``wandb.log`` when ``with_step`` is false.
        by_epoch: Count ``interval`` within the epoch or over all iterations.
        with_step: Log at the global step (see above) instead of wandb's own counter.
        log_artifact: After the run, log the files of ``work_dir`` (recursively) whose names
            end with ``out_suffix`` as an artifact named ``artifacts`` of type ``model``.
        out_suffix: File name endings of the artifact's files.
        define_metric_cfg: ``{metric: summary}`` for ``wandb.define_metric`` (summary one of
            ``min``, ``max``, ``mean``, ``best``, ``last``, ``none``; others are skipped with a
            warning), e.g. ``{'val/accuracy': 'max'}``.

    Raises:
        ImportError: wandb is not installed.
    """

    def __init__(
        self,
        init_kwargs: dict | None = None,
        interval: int = 10,
        ignore_last: bool = True,
        reset_flag: bool = False,
        commit: bool = True,
        by_epoch: bool = True,
        with_step: bool = True,
        log_artifact: bool = True,
        out_suffix: Union[str, tuple[str, ...]] = (".log.json", ".log", ".py"),
        define_metric_cfg: dict | None = None,
    ) -> None:
        super().__init__(interval, ignore_last, reset_flag, by_epoch)
        self.import_wandb()
        self.init_kwargs = init_kwargs
        self.commit = commit
        self.with_step = with_step
        self.log_artifact = log_artifact
        self.out_suffix = out_suffix if isinstance(out_suffix, str) else tuple(out_suffix)
        self.define_metric_cfg = define_metric_cfg
        self.run: Any = None

    def import_wandb(self) -> None:
        """Import ``wandb`` (as ``self.wandb``)."""
        self.wandb = import_tracker("wandb", "wandb", type(self).__name__)

    def before_run(self, runner: Any) -> None:
        """Start the wandb run and declare the metric summaries (rank 0)."""
        super().before_run(runner)
        if runner.rank != 0:
            return
        self.run = self.wandb.init(**(self.init_kwargs or {}))
        for metric, summary in (self.define_metric_cfg or {}).items():
            if summary not in _SUMMARIES:
                warnings.warn(
                    f"WandbLoggerHook: define_metric_cfg[{metric!r}] = {summary!r} is not one of "
                    f"{_SUMMARIES}; the metric is logged without a summary",
                    stacklevel=2,
                )
                continue
            self.run.define_metric(metric, summary=summary)

    def log(self, runner: Any) -> None:
        """Send the record's scalars (rank 0)."""
        if self.run is None:
            return
        tags = self.get_record_tags(runner)
        if not tags:
            return
        step = self.get_step(runner)
        if self.with_step:
            self.run.log(tags, step=step, commit=False)
        else:
            tags["global_step"] = step
            self.run.log(tags, commit=self.commit)

    def after_run(self, runner: Any) -> None:
        """Log the artifact (if ``log_artifact``) and finish the run (rank 0)."""
        if self.run is None:
            return
        try:
            if self.log_artifact:
                self._log_artifact(runner.work_dir)
        finally:
            self.run.finish()
            self.run = None

    def _log_artifact(self, work_dir: str) -> None:
        # wandb's own directory (when WANDB_DIR is inside work_dir) holds logs it still writes.
        wandb_dir = osp.realpath(osp.dirname(osp.dirname(self.run.dir)))
        paths = []
        for root, dirs, files in os.walk(work_dir):
            dirs[:] = sorted(d for d in dirs if osp.realpath(osp.join(root, d)) != wandb_dir)
            paths += [osp.join(root, f) for f in sorted(files) if f.endswith(self.out_suffix)]
        if not paths:
            return
        artifact = self.wandb.Artifact(name="artifacts", type="model")
        for path in paths:
            artifact.add_file(path, name=osp.relpath(path, work_dir))
        self.run.log_artifact(artifact)
