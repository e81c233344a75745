"""MlflowLoggerHook: metrics, params, tags and (optionally) the trained model to MLflow."""

from __future__ import annotations

import inspect
from typing import Any

import torch

from mmpar.parallel import is_module_wrapper

from ..hook import HOOKS
from .base import LoggerHook, import_tracker


@HOOKS.register_module()
class MlflowLoggerHook(LoggerHook):
    """Log every record's scalars to MLflow with ``mlflow.log_metrics(tags, step=step)``.

    The tracking server is MLflow's usual choice (``MLFLOW_TRACKING_URI`` or
    ``mlflow.set_tracking_uri``). On rank 0, :meth:`before_run` selects the experiment, starts a
    run unless one is already active (a run you started around ``runner.run`` is used and left
    open), and sets ``tags`` and ``params``; :meth:`after_run` logs the model and ends the run
    it started. Tags are ``train/<var>``, ``val/<metric>``, ``learning_rate`` and ``momentum``;
    the step is the global optimizer step (:meth:`LoggerHook.get_step`), so evaluation results
    share the step of the train record before them. ``mlflow`` is imported when the hook is
    built (``pip install mlflow``).

    Args:
        exp_name: Experiment to log to (created if missing); MLflow's active/default one if
            ``None``.
        tags: Tags set on the run.
        params: Parameters logged on the run.
        log_model: At the end of the run, log the (unwrapped) model with
            ``mlflow.pytorch.log_model`` under the artifact name ``models``.
        interval, ignore_last, reset_flag, by_epoch: As :class:`LoggerHook`.

    Raises:
        ImportError: mlflow is not installed.
    """

    def __init__(
        self,
        exp_name: str | None = None,
        tags: dict | None = None,
        params: dict | None = None,
        log_model: bool = True,
        interval: int = 10,
        ignore_last: bool = True,
        reset_flag: bool = False,
        by_epoch: bool = True,
    ) -> None:
        super().__init__(interval, ignore_last, reset_flag, by_epoch)
        self.import_mlflow()
        self.exp_name = exp_name
        self.tags = tags
        self.params = params
        self.log_model = log_model
        self.run_id: str | None = None
        self._started_run = False

    def import_mlflow(self) -> None:
        """Import ``mlflow`` and ``mlflow.pytorch`` (as ``self.mlflow``/``self.mlflow_pytorch``)."""
        self.mlflow = import_tracker("mlflow", "mlflow", type(self).__name__)
        self.mlflow_pytorch = import_tracker("mlflow.pytorch", "mlflow", type(self).__name__)

    def before_run(self, runner: Any) -> None:
        """Select the experiment, start (or join) the run, set tags and params (rank 0)."""
        super().before_run(runner)
        if runner.rank != 0:
            return
        if self.exp_name is not None:
            self.mlflow.set_experiment(self.exp_name)
        run = self.mlflow.active_run()
        self._started_run = run is None
        if run is None:
            run = self.mlflow.start_run()
        self.run_id = run.info.run_id
        if self.tags is not None:
            self.mlflow.set_tags(self.tags)
        if self.params is not None:
            self.mlflow.log_params(self.params)

    def log(self, runner: Any) -> None:
        """Log the record's scalars at the current global step (rank 0)."""
        if runner.rank != 0 or self.run_id is None:
            return
        tags = self.get_record_tags(runner)
        if tags:
            self.mlflow.log_metrics(tags, step=self.get_step(runner))

    def after_run(self, runner: Any) -> None:
        """Log the model if ``log_model``, then end the run this hook started (rank 0)."""
        if runner.rank != 0 or self.run_id is None:
            return
        try:
            if self.log_model:
                self._log_model(runner)
        finally:
            if self._started_run and self.mlflow.active_run() is not None:
                self.mlflow.end_run()
            self.run_id = None
            self._started_run = False

    def _log_model(self, runner: Any) -> None:
        model = runner.model.module if is_module_wrapper(runner.model) else runner.model
        kwargs: dict[str, Any] = {"pip_requirements": [f"torch=={torch.__version__}"]}
        accepted = inspect.signature(self.mlflow_pytorch.log_model).parameters
        # MLflow 3 names the model with ``name`` (``artifact_path`` is deprecated) and defaults
        # to the traced 'pt2' format, which needs an input example; the pickled module is what
        # MLflow 2 stored and what ``mlflow.pytorch.load_model`` gives back unchanged.
        kwargs["name" if "name" in accepted else "artifact_path"] = "models"
        if "serialization_format" in accepted:
            kwargs["serialization_format"] = "pickle"
        self.mlflow_pytorch.log_model(model, **kwargs)
