"""NeptuneLoggerHook: metrics to a neptune.ai run."""

from __future__ import annotations

import warnings
from typing import Any

from mmpar.utils.dist import master_only

from ...runner_protocol import RunnerLike
from ..hook import HOOKS
from .base import LoggerHook


@HOOKS.register_module()
class NeptuneLoggerHook(LoggerHook):
    """Log every record's values to the series of a neptune run, on rank 0 only.

    The calls are mmcv 1.7.2's: the library is imported as ``neptune.new``; :meth:`before_run`
    starts the run with ``neptune.new.init(**init_kwargs)`` (``init_run`` on neptune 1.x, which
    removed ``init``); every tag of a record is ``run[tag].log(value, step=runner.iter + 1)``;
    :meth:`after_run` calls ``run.stop()``. Project and API token come from the arguments or
    the ``NEPTUNE_PROJECT`` / ``NEPTUNE_API_TOKEN`` environment variables. ``neptune`` is
    imported when the hook is built (``pip install neptune``).

    Args:
        init_kwargs: Keyword arguments of ``neptune.init``/``init_run`` (``project``,
            ``api_token``, ``name``, ...).
        interval, ignore_last, reset_flag: As :class:`LoggerHook`.
        with_step: Log values at ``runner.iter + 1``. Otherwise each value is logged without a
            step and the step goes to a ``global_step`` series (mmcv raised a RuntimeError
            there, changing the tags while iterating over them).
        by_epoch: Count ``interval`` within the epoch or over all iterations.

    Raises:
        ImportError: neptune is not installed.
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
        """Import ``neptune.new`` (as ``self.neptune``), the module mmcv uses.

        Raises:
            ImportError: neptune is not installed.
        """
        try:
            with warnings.catch_warnings():
                # neptune 1.x keeps ``neptune.new`` as a deprecated alias of ``neptune``; it is
                # the name mmcv code (and its tests' stand-ins) provide.
                warnings.simplefilter("ignore")
                import neptune.new as neptune
        except ImportError as exc:
            raise ImportError(
                f"{type(self).__name__} needs the Python package 'neptune', which is not "
                f"installed or cannot be imported ({exc}): install it with: pip install neptune"
            ) from exc
        self.neptune = neptune
        self.run: Any = None

    @master_only
    def before_run(self, runner: RunnerLike) -> None:
        """Start the neptune run (rank 0)."""
        # mmcv's hook does not call LoggerHook.before_run here; reset_flag defaults to True.
        init = getattr(self.neptune, "init", None)
        if init is None:
            init = self.neptune.init_run
        if self.init_kwargs:
            self.run = init(**self.init_kwargs)
        else:
            self.run = init()

    @master_only
    def log(self, runner: RunnerLike) -> None:
        """Log the record's values to their series (rank 0)."""
        tags = self.get_loggable_tags(runner)
        step = self.get_iter(runner)
        for name, value in tags.items():
            if self.with_step:
                self.run[name].log(value, step=step)
            else:
                self.run[name].log(value)
        if tags and not self.with_step:
            self.run["global_step"].log(step)

    @master_only
    def after_run(self, runner: RunnerLike) -> None:
        """Stop the run (rank 0)."""
        self.run.stop()
