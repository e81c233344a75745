"""Checks of what users hand a runner: constructor and run() arguments, work_dir, workflow."""

from __future__ import annotations

import copy
import difflib
import logging
import os
import warnings
from typing import Any, Callable

from torch.optim import Optimizer

from mmpar.parallel.utils import unwrap_model
from mmpar.utils.compat_errors import CheckTypeError, CheckValueError

VALID_MODES = ("train", "val")


def check_workflow(data_loaders: Any, workflow: Any) -> None:
    """Validate ``workflow`` (``[('train', 2), ('val', 1)]``) against the data loaders.

    Raises:
        TypeError: ``data_loaders`` or ``workflow`` is not a list.
        ValueError: Lengths differ, a mode is unknown, or a count is not a positive int.
    """
    if not isinstance(data_loaders, (list, tuple)):
        raise CheckTypeError(f"data_loaders must be a list, but got {type(data_loaders).__name__}")
    if not isinstance(workflow, (list, tuple)):
        raise CheckTypeError(
            f"workflow must be a list of (mode, count), got {type(workflow).__name__}"
        )
    if len(data_loaders) != len(workflow):
        raise CheckValueError(
            f"workflow has {len(workflow)} phases but {len(data_loaders)} data loaders were given; "
            "pass one data loader per workflow phase"
        )
    for phase in workflow:
        if not (isinstance(phase, (list, tuple)) and len(phase) == 2):
            raise CheckValueError(f"each workflow phase must be (mode, count), got {phase!r}")
        mode, count = phase
        if not isinstance(mode, str):
            raise CheckTypeError(f"workflow mode must be a str such as 'train', got {mode!r}")
        if mode not in VALID_MODES:
            close = difflib.get_close_matches(str(mode), VALID_MODES, n=1, cutoff=0.5)
            hint = f" Did you mean: {close[0]}?" if close else ""
            raise CheckValueError(
                f"unknown workflow mode {mode!r} in {phase!r}; valid modes are "
                f"{list(VALID_MODES)}.{hint}"
            )
        if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
            raise CheckValueError(f"workflow phase {phase!r}: the count must be a positive int")


class NoTrainStepError(TypeError, AssertionError):
    """The model has no ``train_step`` and no ``batch_processor`` was given.

    A TypeError, and an AssertionError as mmcv checked it with ``assert``.
    """


def check_runner_args(
    model: Any,
    batch_processor: Callable | None,
    optimizer: Any,
    meta: Any,
    max_iters: Any,
    max_epochs: Any,
    logger: Any = None,
) -> None:
    """Check BaseRunner's constructor arguments (see its docstring for what each must be).

    Raises:
        TypeError: Wrong model/optimizer/meta/batch_processor/logger types.
        RuntimeError: Both ``batch_processor`` and ``model.train_step``/``val_step`` exist
            (as in mmcv: which one runs would be ambiguous).
        ValueError: Both or non-positive ``max_epochs``/``max_iters``.
    """
    inner = unwrap_model(model)
    if batch_processor is not None:
        if not callable(batch_processor):
            raise TypeError(
                f"batch_processor must be callable, but got {type(batch_processor).__name__}"
            )
        warnings.warn(
            "batch_processor is deprecated; implement model.train_step/val_step instead",
            DeprecationWarning,
            stacklevel=3,
        )
        if hasattr(inner, "train_step") or hasattr(inner, "val_step"):
            raise RuntimeError(
                f"model {type(inner).__name__} defines train_step/val_step and a batch_processor "
                "was given too; pass only one of them"
            )
    elif not hasattr(inner, "train_step"):
        raise NoTrainStepError(
            f"model {type(inner).__name__} has no train_step(data_batch, optimizer) method; "
            "define train_step/val_step on the model or pass a batch_processor"
        )
    if logger is not None and not isinstance(logger, (logging.Logger, logging.LoggerAdapter)):
        raise TypeError(f"logger must be a logging.Logger or None, got {type(logger).__name__}")
    _check_optimizer(optimizer)
    if meta is not None and not isinstance(meta, dict):
        raise TypeError(f"meta must be a dict or None, but got {type(meta).__name__}")
    if max_epochs is not None and max_iters is not None:
        raise ValueError(
            "Only one of max_epochs and max_iters can be set "
            f"(got max_epochs={max_epochs}, max_iters={max_iters})"
        )
    run_limit("max_epochs", max_epochs)
    run_limit("max_iters", max_iters)


def run_limit(name: str, value: Any) -> int | None:
    """``value`` as the int limit it stands for (None stays None).

    A whole float (``max_iters=1e5`` in a config) counts as its int, as mmcv's loops take it.

    Raises:
        ValueError: Not a positive whole number.
    """
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive int or None, but got {value!r}")
    return value


def _check_optimizer(optimizer: Any) -> None:
    if optimizer is None or isinstance(optimizer, Optimizer):
        return
    if isinstance(optimizer, dict):
        for name, optim in optimizer.items():
            if not isinstance(optim, Optimizer):
                raise TypeError(
                    f'optimizer["{name}"] must be a torch Optimizer, but got {type(optim).__name__}'
                )
        return
    raise TypeError(
        "optimizer must be a torch Optimizer, a dict of them or None, "
        f"but got {type(optimizer).__name__}"
    )


def prepare_work_dir(work_dir: Any) -> str | None:
    """Return ``work_dir`` as an absolute path, created if missing (None stays None).

    Raises:
        TypeError: ``work_dir`` is not a str or path.
        PermissionError: It cannot be created or written.
    """
    if work_dir is None:
        return None
    if not isinstance(work_dir, (str, os.PathLike)):
        raise TypeError(f"work_dir must be a str or None, but got {type(work_dir).__name__}")
    path = os.path.abspath(os.fspath(work_dir))
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as err:
        raise PermissionError(
            f'cannot create work_dir "{path}": {err.strerror}; choose a writable directory'
        ) from err
    if not os.access(path, os.W_OK | os.X_OK):
        raise PermissionError(f'work_dir "{path}" is not writable; choose another directory')
    return path


def resolve_run_limit(runner: Any, name: str, value: int | None) -> int:
    """Apply the deprecated ``run(max_epochs/max_iters=...)`` argument; return the limit.

    Args:
        runner: The runner; its ``_max_epochs``/``_max_iters`` is read and, if ``value`` is
            given, set.
        name: ``'max_epochs'`` or ``'max_iters'``.
        value: The value passed to ``run()`` (None when not passed).

    Raises:
        ValueError: The limit is set neither in ``run()`` nor in the constructor.
    """
    if value is not None:
        warnings.warn(
            f"setting {name} in run() is deprecated; pass it to the runner constructor",
            DeprecationWarning,
            stacklevel=5,  # resolve_run_limit <- _run_workflow <- run() <- guard <- the call
        )
        setattr(runner, f"_{name}", run_limit(name, value))
    limit = getattr(runner, f"_{name}")
    if limit is None:
        raise CheckValueError(f"{name} must be set (in the runner constructor) to run")
    return limit


def split_constructor(cfg: Any, what: str, default: str) -> tuple[dict, str]:
    """A deep copy of a builder config without its ``constructor`` key, and that key.

    Args:
        cfg: ``dict(type=..., constructor=..., ...)``: a runner or optimizer config.
        what: Its name in the error message (``'runner'``, ``'optimizer'``).
        default: The constructor when the config names none.

    Raises:
        TypeError: ``cfg`` is not a dict.
    """
    if not isinstance(cfg, dict):
        raise TypeError(f"{what} config must be a dict, but got {type(cfg).__name__}")
    cfg = copy.deepcopy(cfg)
    return cfg, cfg.pop("constructor", default)


__all__ = [
    "VALID_MODES",
    "NoTrainStepError",
    "check_runner_args",
    "check_workflow",
    "prepare_work_dir",
    "resolve_run_limit",
    "run_limit",
    "split_constructor",
]
