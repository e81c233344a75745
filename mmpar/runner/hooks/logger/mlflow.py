"""MlflowLoggerHook: metrics, params, tags and (optionally) the trained model to MLflow."""

from __future__ import annotations

from typing import Any

import torch

from mmpar.utils import TORCH_VERSION as TORCH_VERSION  # mmcv's module imports it too
from mmpar.utils.dist import master_only

from ...runner_protocol import RunnerLike
from ..hook import HOOKS
from .base import LoggerHook


@HOOKS.register_module()
class MlflowLoggerHook(LoggerHook):
    """Log every record's values to MLflow with ``mlflow.log_metrics(tags, step=...)``.

    The calls are mmcv 1.7.2's, on rank 0: :meth:`before_run` calls
    ``mlflow.set_experiment(exp_name)``, ``mlflow.set_tags(tags)`` and
    ``mlflow.log_params(params)`` (each only when given), every record is
    ``mlflow.log_metrics(tags, step=runner.iter + 1)`` (tags from
    :meth:`LoggerHook.get_loggable_tags`), and :meth:`after_run` logs ``runner.model`` with
    ``mlflow.pytorch.log_model`` when ``log_model``. MLflow starts the run on the first of these
    calls unless one is active, and the run stays active after training (MLflow ends it when the
    process exits; call ``mlflow.end_run()`` to end it sooner). The tracking server is MLflow's
    usual choice (``MLFLOW_TRACKING_URI`` or ``mlflow.set_tracking_uri``). ``mlflow`` is imported
    when the hook is built (``pip install mlflow``).

    Args:
        exp_name: Experiment to log to (created if missing); MLflow's active/default one if
            ``None``.
        tags: Tags set on the run.
        params: Parameters logged on the run.
        log_model: At the end of the run, log ``runner.model`` under the artifact name
            ``models``.
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

    def import_mlflow(self) -> None:
        """Import ``mlflow`` and ``mlflow.pytorch`` (as ``self.mlflow``/``self.mlflow_pytorch``).

        Raises:
            ImportError: mlflow is not installed.
        """
        try:
            import mlflow
            import mlflow.pytorch as mlflow_pytorch
        except ImportError as exc:
            raise ImportError(
                f"{type(self).__name__} needs the Python package 'mlflow', which is not "
                f"installed or cannot be imported ({exc}): install it with: pip install mlflow"
            ) from exc
        self.mlflow = mlflow
        self.mlflow_pytorch = mlflow_pytorch

    @master_only
    def before_run(self, runner: RunnerLike) -> None:
        """Select the experiment, set the tags and log the params (rank 0)."""
        super().before_run(runner)
        if self.exp_name is not None:
            self.mlflow.set_experiment(self.exp_name)
        if self.tags is not None:
            self.mlflow.set_tags(self.tags)
        if self.params is not None:
            self.mlflow.log_params(self.params)

    @master_only
    def log(self, runner: RunnerLike) -> None:
        """Log the record's values at step ``runner.iter + 1`` (rank 0)."""
        tags = self.get_loggable_tags(runner)
        if tags:
            self.mlflow.log_metrics(tags, step=self.get_iter(runner))

    @master_only
    def after_run(self, runner: RunnerLike) -> None:
        """Log ``runner.model`` if ``log_model`` (rank 0)."""
        if not self.log_model:
            return
        requirements = [f"torch=={torch.__version__}"]
        if _major_version(self.mlflow) >= 3:
            # MLflow 3 names the artifact with ``name`` (``artifact_path`` is deprecated) and by
            # default stores the traced 'pt2' format, which needs an input example; the pickled
            # module is what mmcv's MLflow stored and what ``load_model`` gives back unchanged.
            self.mlflow_pytorch.log_model(
                runner.model,
                name="models",
                pip_requirements=requirements,
                serialization_format="pickle",
            )
        else:
            self.mlflow_pytorch.log_model(runner.model, "models", pip_requirements=requirements)


def _major_version(module: Any) -> int:
    """The major version of ``module`` (0 when it has no version string, e.g. a stand-in)."""
    version = getattr(module, "__version__", None)
    if not isinstance(version, str) or not version.split(".")[0].isdigit():
        return 0
    return int(version.split(".")[0])
