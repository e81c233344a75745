"""WandbLoggerHook: metrics (and the run's log files as an artifact) to Weights & Biases."""

from __future__ import annotations

import os.path as osp
import warnings
from typing import Any, Union

from mmpar.utils.dist import master_only
from mmpar.utils.path import scandir

from ...runner_protocol import RunnerLike
from ..hook import HOOKS
from .base import LoggerHook, import_tracker

_SUMMARIES = ("min", "max", "mean", "best", "last", "none")


@HOOKS.register_module()
class WandbLoggerHook(LoggerHook):
    """Log every record's values to wandb, on rank 0 only, with mmcv 1.7.2's calls.

    :meth:`before_run` calls ``wandb.init(**init_kwargs)`` (so ``WANDB_MODE=offline``,
    ``WANDB_DIR``, ``WANDB_PROJECT`` ... apply as usual) and ``wandb.define_metric(metric,
    summary=summary)`` for ``define_metric_cfg``; every record is ``wandb.log(tags,
    step=runner.iter + 1, commit=commit)`` (or, without ``with_step``, ``wandb.log(tags,
    commit=commit)`` with the step in a ``global_step`` tag); :meth:`after_run` logs the files
    of ``work_dir`` ending in ``out_suffix`` as a ``wandb.Artifact(name='artifacts',
    type='model')`` with ``wandb.log_artifact`` and calls ``wandb.join()``. Tags come from
    :meth:`LoggerHook.get_loggable_tags`. ``wandb`` is imported when the hook is built
    (``pip install wandb``).

    wandb drops a value logged at a step below its current one, as it did under mmcv: with
    ``commit=True`` and ``interval=1``, the first train record of an epoch has the step of the
    val record just committed before it and is dropped with a wandb warning.

    Args:
        init_kwargs: Keyword arguments of ``wandb.init`` (project, name, config, mode, dir, ...).
        interval, ignore_last, reset_flag: As :class:`LoggerHook`.
        commit: ``commit`` of ``wandb.log``.
        by_epoch: Count ``interval`` within the epoch or over all iterations.
        with_step: Pass the step to ``wandb.log`` instead of a ``global_step`` tag.
        log_artifact: After the run, log the files of ``work_dir`` (recursively) whose names
            end with ``out_suffix`` as an artifact named ``artifacts`` of type ``model``. When
            wandb's own directory is inside ``work_dir``, the files wandb is still writing there
            are left out.
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

    @master_only
    def before_run(self, runner: RunnerLike) -> None:
        """Start the wandb run and declare the metric summaries (rank 0)."""
        super().before_run(runner)
        if self.wandb is None:
            self.import_wandb()
        if self.init_kwargs:
            self.run = self.wandb.init(**self.init_kwargs)
        else:
            self.run = self.wandb.init()
        for metric, summary in (self.define_metric_cfg or {}).items():
            if summary not in _SUMMARIES:
                # mmcv warned "will be skipped" but still called define_metric, which wandb
                # rejects with an error; skipping is what the warning says.
                warnings.warn(
                    f"WandbLoggerHook: define_metric_cfg[{metric!r}] = {summary!r} is not one of "
                    f"{_SUMMARIES}; the metric is logged without a summary",
                    stacklevel=2,
                )
                continue
            self.wandb.define_metric(metric, summary=summary)

    @master_only
    def log(self, runner: RunnerLike) -> None:
        """Send the record's values (rank 0)."""
        tags = self.get_loggable_tags(runner)
        if not tags:
            return
        if self.with_step:
            self.wandb.log(tags, step=self.get_iter(runner), commit=self.commit)
        else:
            tags["global_step"] = self.get_iter(runner)
            self.wandb.log(tags, commit=self.commit)

    @master_only
    def after_run(self, runner: RunnerLike) -> None:
        """Log the artifact (if ``log_artifact``) and end the run with ``wandb.join()``."""
        if self.log_artifact:
            artifact = self.wandb.Artifact(name="artifacts", type="model")
            own_dir = self._wandb_dir()
            for filename in scandir(runner.work_dir, self.out_suffix, True):
                path = osp.join(runner.work_dir, filename)
                if own_dir is None or not osp.realpath(path).startswith(own_dir):
                    artifact.add_file(path)
            self.wandb.log_artifact(artifact)
        self.wandb.join()

    def _wandb_dir(self) -> str | None:
        """The directory of wandb's own files (logs it is still writing), when known."""
        run_dir = getattr(self.run, "dir", None)  # <wandb dir>/<run>/files
        if not isinstance(run_dir, str):
            return None
        return osp.join(osp.realpath(osp.dirname(osp.dirname(run_dir))), "")
