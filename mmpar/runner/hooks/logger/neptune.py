"""NeptuneLoggerHook: metrics to a neptune.ai run."""

from __future__ import annotations

from typing import Any

from ..hook import HOOKS
from .base import LoggerHook, import_tracker


@HOOKS.register_module()
class NeptuneLoggerHook(LoggerHook):
    """Append every record's scalars to the series of a neptune run, on rank 0 only.

    :meth:`before_run` calls ``neptune.init_run(**init_kwargs)`` (project and API token from
    the arguments or the ``NEPTUNE_PROJECT`` / ``NEPTUNE_API_TOKEN`` environment variables);
    :meth:`after_run` stops the run. Tags are ``train/<var>``, ``val/<metric>``,
    ``learning_rate`` and ``momentum``. ``neptune`` (1.x) is imported when the hook is built
    (``pip install neptune``).

    Args:
        init_kwargs: Keyword arguments of ``neptune.init_run`` (``project``, ``api_token``,
            ``name``, ...).
        interval, ignore_last, reset_flag: As :class:`LoggerHook`.
        with_step: Append values at the global optimizer step (:meth:`LoggerHook.get_step`);
            otherwise neptune numbers the values and the step goes to a ``global_step`` series.
        by_epoch: Count ``interval`` within the epoch or over all iterations.

    Raises:
        ImportError: neptune is not installed (or is older than 1.0).
    """

    def __init__(
        self,
        init_kwargs: dict | None = None,
        interval: int = 10,
        ignore_last: bool = True,
        reset_flag: bool = True,
        with_step: bool = True,
        by_epoch: bool = True,
    ) -> None:
        super().__init__(interval, ignore_last, reset_flag, by_epoch)
        self.import_neptune()
        self.init_kwargs = init_kwargs
        self.with_step = with_step

    def import_neptune(self) -> None:
        """Import ``neptune`` (as ``self.neptune``); it must provide ``init_run``."""
        self.neptune = import_tracker("neptune", "neptune", type(self).__name__)
        if not hasattr(self.neptune, "init_run"):
            raise ImportError(
                f"{type(self).__name__} needs neptune >= 1.0 (neptune.init_run is missing from "
                f"{getattr(self.neptune, '__file__', 'neptune')}); upgrade with: "
                "pip install -U neptune"
            )
        self.run: Any = None

    def before_run(self, runner: Any) -> None:
        """Start the neptune run (rank 0)."""
        super().before_run(runner)
        if runner.rank == 0:
            self.run = self.neptune.init_run(**(self.init_kwargs or {}))

    def log(self, runner: Any) -> None:
        """Append the record's scalars to their series (rank 0)."""
        if self.run is None:
            return
        tags = self.get_record_tags(runner)
        step = self.get_step(runner)
        for name, value in tags.items():
            if self.with_step:
                self.run[name].append(value, step=step)
            else:
                self.run[name].append(value)
        if tags and not self.with_step:
            self.run["global_step"].append(step)

    def after_run(self, runner: Any) -> None:
        """Stop the run (rank 0)."""
        if self.run is not None:
            self.run.stop()
            self.run = None
