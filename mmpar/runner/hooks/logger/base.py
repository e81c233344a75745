"""LoggerHook: the base of every logger hook (averaging, train/val record separation)."""

from __future__ import annotations

import numbers
from abc import ABCMeta, abstractmethod
from typing import Any

import numpy as np
import torch

from mmpar.utils.misc import check_int_arg, import_optional

from ...runner_protocol import RunnerLike
from ..hook import Hook


def import_tracker(module: str, package: str, hook: str) -> Any:
    """Import the tracker library ``module`` that ``hook`` needs.

    Tracker hooks call this when they are built, so ``import mmpar.runner`` never loads a
    tracker library and a missing one is reported before training starts.

    Args:
        module: Dotted module name, e.g. ``'mlflow.pytorch'``.
        package: The pip package that provides it, named in the error.
        hook: The hook's class name, named in the error.

    Raises:
        ImportError: The module cannot be imported.
    """
    return import_optional(module, hook, f"install it with: pip install {package}")


class LoggerHook(Hook, metaclass=ABCMeta):
    """Base class for logger hooks (mmcv 1.x semantics).

    Every ``interval`` training iterations the hook averages the last ``interval`` values of
    ``runner.log_buffer`` into ``runner.log_buffer.output`` and calls :meth:`log`. At the end of a
    validation epoch it averages the whole epoch and logs one val record. Results that another
    hook put into the buffer output during a stage (``EvalHook`` writes its metrics there and sets
    ``ready``) are logged as a separate *val* record after the train record of the same step,
    never merged into it (the mmcv#1058 mix-up of ``train/<metric>`` and ``val/<metric>``).

    Several logger hooks share one buffer: each logs the same records, and the last one (in
    priority order) clears the output after logging, which is why :meth:`before_run` sets
    ``reset_flag`` on it like mmcv does.

    Args:
        interval: Log every ``interval`` training iterations.
        ignore_last: Do not log the last iterations of an epoch when there are fewer than
            ``interval`` of them.
        reset_flag: Clear ``log_buffer.output`` after logging (set automatically on the last
            logger hook).
        by_epoch: Count ``interval`` within the epoch (``True``) or over all iterations.
    """

    def __init__(
        self,
        interval: int = 10,
        ignore_last: bool = True,
        reset_flag: bool = False,
        by_epoch: bool = True,
    ) -> None:
        self.interval = check_int_arg(interval, "interval", type(self).__name__)
        self.ignore_last = ignore_last
        self.reset_flag = reset_flag
        self.by_epoch = by_epoch
        self._first_logger = True
        self._pending_val: dict | None = None
        self._step: int | None = None
        self._last_mode: str | None = None
        self._import_tracker()

    def _import_tracker(self) -> None:
        """Import the tracker library the hook writes to; none here.

        Called at the end of the constructor, so a tracker hook with no arguments of its own
        (Segmind) keeps this constructor and its mmcv signature, and still fails when built.
        """

    @abstractmethod
    def log(self, runner: RunnerLike) -> Any:
        """Write the record currently in ``runner.log_buffer.output``."""

    @staticmethod
    def is_scalar(val: Any, include_np: bool = True, include_torch: bool = True) -> bool:
        """Whether ``val`` is a single number (Python, 0-d/1-element numpy or torch).

        Args:
            val: The value to check.
            include_np: Accept numpy scalars and one-element arrays.
            include_torch: Accept one-element tensors.
        """
        if isinstance(val, bool):
            return False
        if isinstance(val, numbers.Number):
            return True
        if include_np and isinstance(val, (np.ndarray, np.generic)) and np.size(val) == 1:
            return True
        return include_torch and isinstance(val, torch.Tensor) and val.numel() == 1

    def get_mode(self, runner: RunnerLike) -> str:
        """Return ``'train'`` for a training record and ``'val'`` for evaluation/val records.

        During training, a record without ``time`` (written by the iteration timer for every
        training iteration) holds evaluation results.
        """
        if runner.mode == "train":
            return "train" if "time" in runner.log_buffer.output else "val"
        if runner.mode == "val":
            return "val"
        raise ValueError(
            f"runner.mode must be 'train' or 'val' when logging, but got {runner.mode!r}"
        )

    def get_epoch(self, runner: RunnerLike) -> int:
        """Return the 1-based epoch a record belongs to."""
        if runner.mode == "train":
            return runner.epoch + 1
        if runner.mode == "val":
            # The runner counts the train epoch as done before a val epoch runs.
            return runner.epoch
        raise ValueError(
            f"runner.mode must be 'train' or 'val' when logging, but got {runner.mode!r}"
        )

    def get_iter(self, runner: RunnerLike, inner_iter: bool = False) -> int:
        """Return the 1-based iteration (within the epoch if ``by_epoch and inner_iter``)."""
        if self.by_epoch and inner_iter:
            return runner.inner_iter + 1
        return runner.iter + 1

    def get_step(self, runner: RunnerLike) -> int:
        """Return the number of optimizer steps taken so far (the global step of a record).

        Inside ``after_train_iter`` the runner has not yet counted the iteration that just ran,
        so this is ``runner.iter + 1`` there and ``runner.iter`` at epoch ends; a val record
        therefore shares the step of the last train record before it.
        """
        return self._step if self._step is not None else runner.iter + 1

    def get_lr_tags(self, runner: RunnerLike) -> dict[str, float]:
        """Return ``{'learning_rate': lr}`` (or ``learning_rate/<name>`` per optimizer)."""
        lrs = runner.current_lr()
        if isinstance(lrs, dict):
            return {f"learning_rate/{name}": value[0] for name, value in lrs.items()}
        return {"learning_rate": lrs[0]}

    def get_momentum_tags(self, runner: RunnerLike) -> dict[str, float]:
        """Return ``{'momentum': m}`` (or ``momentum/<name>`` per optimizer)."""
        momentums = runner.current_momentum()
        if isinstance(momentums, dict):
            return {f"momentum/{name}": value[0] for name, value in momentums.items()}
        return {"momentum": momentums[0]}

    def get_loggable_tags(
        self,
        runner: RunnerLike,
        allow_scalar: bool = True,
        allow_text: bool = False,
        add_mode: bool = True,
        tags_to_skip: tuple[str, ...] = ("time", "data_time"),
    ) -> dict[str, Any]:
        """Return the output values as ``{tag: value}`` plus the lr and momentum tags (as mmcv).

        The tracker hooks send exactly this to their libraries, like mmcv's: values are passed
        as they are in the buffer, and only scalars (without ``allow_scalar``), strings (without
        ``allow_text``) and ``tags_to_skip`` are left out. A val record written by ``EvalHook``
        may therefore carry ``eval_iter_num`` unless a ``TextLoggerHook`` before this hook
        consumed it, as in mmcv.

        Args:
            runner: The runner.
            allow_scalar: Include scalar values.
            allow_text: Include string values.
            add_mode: Prefix tags with ``train/`` or ``val/``.
            tags_to_skip: Output keys never included.
        """
        tags = {}
        for var, val in runner.log_buffer.output.items():
            if var in tags_to_skip:
                continue
            if not allow_scalar and self.is_scalar(val):
                continue
            if not allow_text and isinstance(val, str):
                continue
            tags[f"{self.get_mode(runner)}/{var}" if add_mode else var] = val
        tags.update(self.get_lr_tags(runner))
        tags.update(self.get_momentum_tags(runner))
        return tags

    def get_record_tags(
        self, runner: RunnerLike, allow_text: bool = False, add_mode: bool = True
    ) -> dict[str, Any]:
        """Return the plottable values of the current record (what TensorBoard writes).

        Unlike :meth:`get_loggable_tags`, values that are neither scalars nor (with
        ``allow_text``) text are left out, one-element arrays/tensors become Python numbers,
        ``eval_iter_num`` is skipped, and a val record gets no lr/momentum: it shares its step
        with the train record before it, whose learning rate and momentum are already logged.

        Args:
            runner: The runner.
            allow_text: Include string values.
            add_mode: Prefix tags with ``train/`` or ``val/``.
        """
        tags = {}
        for var, val in self.get_loggable_tags(
            runner,
            allow_text=allow_text,
            add_mode=add_mode,
            tags_to_skip=("time", "data_time", "eval_iter_num"),
        ).items():
            if not (self.is_scalar(val) or isinstance(val, str)):
                continue
            tags[var] = val.item() if isinstance(val, (torch.Tensor, np.ndarray)) else val
        if self.get_mode(runner) == "val":
            skip = ("learning_rate", "momentum")
            tags = {k: v for k, v in tags.items() if not k.startswith(skip)}
        return tags

    # Stages -------------------------------------------------------------------------------------

    def before_run(self, runner: RunnerLike) -> None:
        """Mark the first and the last logger hook (the last clears the shared output)."""
        loggers = [hook for hook in runner.hooks if isinstance(hook, LoggerHook)]
        if loggers:
            loggers[-1].reset_flag = True
            for hook in loggers:
                hook._first_logger = hook is loggers[0]

    def before_epoch(self, runner: RunnerLike) -> None:
        """Start each train and val epoch with an empty buffer, so records never mix modes."""
        runner.log_buffer.clear()
        self._last_mode = None

    def before_train_iter(self, runner: RunnerLike) -> None:
        """Drop buffered val values when training resumes without an epoch boundary."""
        self._switch_mode(runner, "train")

    def before_val_iter(self, runner: RunnerLike) -> None:
        """Drop buffered train values when validation starts without an epoch boundary."""
        self._switch_mode(runner, "val")

    def _switch_mode(self, runner: RunnerLike, mode: str) -> None:
        # An iteration-based runner alternates train and val iterations inside one "epoch";
        # values of one mode must never be averaged into a record of the other.
        if self._last_mode not in (None, mode):
            runner.log_buffer.clear()
        self._last_mode = mode

    def after_train_iter(self, runner: RunnerLike) -> None:
        """Log the train record every ``interval`` iterations, then any pending val record."""
        buf = runner.log_buffer
        self._take_pending_val(runner)
        average = self.record_due(runner)
        if not (average or buf.ready or self._pending_val is not None):
            return  # most iterations: nothing to log
        self._step = runner.iter + 1
        try:
            if average:
                # At an epoch end fewer than ``interval`` values may be left; averaging the
                # last ``interval`` is what mmcv does (not exact, but stable).
                buf.average(self.interval)
            if not buf.output:
                # An iteration-based EvalHook had this record logged before evaluating and
                # emptied the buffer (as mmcv's does): nothing left to log.
                buf.ready = False
            if buf.ready:
                self.log(runner)
                if self.reset_flag:
                    buf.clear_output()
            if self._pending_val is not None:
                self._log_record(runner, self._pending_val)
        finally:
            self._pending_val = None
            self._step = None

    def _take_pending_val(self, runner: RunnerLike) -> None:
        """On the first logger: move results written earlier in this stage to every logger."""
        buf = runner.log_buffer
        if self._first_logger and buf.ready:
            # The last logger cleared the output after the previous record, so anything ready
            # now was written by a hook earlier in this stage (an iteration-based EvalHook).
            pending = dict(buf.output)
            buf.clear_output()
            for hook in runner.hooks:
                if isinstance(hook, LoggerHook):
                    hook._pending_val = pending

    def record_due(self, runner: RunnerLike) -> bool:
        """Whether this training iteration ends with a record (an interval or the epoch end).

        Hooks that run before the loggers use it to compute a costly value (one that syncs
        with the GPU) only when it will be logged.
        """
        # ``end_of_epoch`` measures the loader's length: asked only when needed.
        if self.by_epoch:
            reached = self.every_n_inner_iters(runner, self.interval)
        else:
            reached = self.every_n_iters(runner, self.interval)
        return reached or (not self.ignore_last and self.end_of_epoch(runner))

    def after_train_epoch(self, runner: RunnerLike) -> None:
        """Log what hooks wrote into the buffer at the epoch end (EvalHook results)."""
        if runner.log_buffer.ready:
            self._log_epoch_end(runner)

    def after_val_epoch(self, runner: RunnerLike) -> None:
        """Average the whole val epoch and log it as one val record."""
        runner.log_buffer.average()
        self._log_epoch_end(runner)

    def _log_epoch_end(self, runner: RunnerLike) -> None:
        """Log the buffer output at step ``runner.iter``, then clear it if this hook resets."""
        self._step = runner.iter
        try:
            self.log(runner)
        finally:
            self._step = None
        if self.reset_flag:
            runner.log_buffer.clear_output()

    def _log_record(self, runner: RunnerLike, record: dict) -> None:
        """Log ``record`` as the buffer output, leaving the shared output as it was."""
        buf = runner.log_buffer
        saved, saved_ready = dict(buf.output), buf.ready
        buf.output.clear()
        buf.output.update(record)
        buf.ready = True
        try:
            self.log(runner)
        finally:
            # Every logger shares ``record``, as mmcv's loggers share the output: what this one
            # consumed (TextLoggerHook pops ``eval_iter_num``) is gone for the next ones.
            record.clear()
            record.update(buf.output)
            buf.output.clear()
            buf.output.update(saved)
            buf.ready = saved_ready
