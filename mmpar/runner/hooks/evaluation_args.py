"""Arguments of the evaluation hooks: checks that fail when the hook is built, and signatures.

A wrong argument of ``EvalHook`` / ``DistEvalHook`` or of ``dataset.evaluate`` would otherwise
surface only at the first evaluation, maybe hours into training.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from torch.utils.data import DataLoader

from mmpar.utils.compat_errors import CheckTypeError, CheckValueError
from mmpar.utils.registry import ConfigArgumentError, unexpected_argument_error


def check_eval_hook_args(
    name: str,
    dataloader: Any,
    start: int | None,
    interval: Any,
    by_epoch: Any,
    save_best: Any,
    file_client_args: dict | None,
) -> None:
    """Raise for an evaluation-hook argument of the wrong type or value.

    Args:
        name: The hook's class name, for the messages.
        dataloader: Must be a ``DataLoader``. Its dataset's ``evaluate`` is needed only when
            the hook scores results (a subclass may score them itself, as in mmcv), so
            :meth:`EvalHook.evaluate` checks it.
        start: ``None`` or >= 0.
        interval: A positive int.
        by_epoch: A bool.
        save_best: ``None`` or a metric name (or ``'auto'``).
        file_client_args: ``None``, ``{}`` or ``dict(backend='disk')``.

    Raises:
        TypeError: An argument has the wrong type.
        ValueError: An argument has a wrong value.
    """
    if not isinstance(dataloader, DataLoader):
        raise TypeError(
            f"{name}: dataloader must be a torch.utils.data.DataLoader, "
            f"but got {type(dataloader).__name__}"
        )
    if not isinstance(interval, int) or interval <= 0:
        raise CheckValueError(f"{name}: interval must be a positive int, but got {interval!r}")
    if not isinstance(by_epoch, bool):
        raise CheckTypeError(f"{name}: by_epoch must be a bool, but got {by_epoch!r}")
    if start is not None and start < 0:
        raise CheckValueError(f"{name}: start must be None or >= 0, but got {start}")
    if save_best is not None and not isinstance(save_best, str):
        raise CheckTypeError(
            f'{name}: save_best must be a metric name, "auto" or None, but got {save_best!r}'
        )
    if file_client_args not in (None, {}) and file_client_args.get("backend") != "disk":
        raise ValueError(
            f"{name}: only local files are supported, got file_client_args="
            f'{file_client_args!r}; remove it or use dict(backend="disk")'
        )


def check_eval_kwargs(
    hook_cls: type, dataset: Any, eval_kwargs: dict, also_valid_for: type
) -> None:
    """Raise ConfigArgumentError for an argument neither the hook nor ``evaluate`` takes.

    The hook passes ``eval_kwargs`` on as ``dataset.evaluate(results, logger=...,
    **eval_kwargs)``. An ``evaluate`` with ``**kwargs`` (or without a readable signature) may
    accept anything, so nothing is checked then.

    Args:
        hook_cls: The hook's class (its arguments are listed in the message).
        dataset: The dataset whose ``evaluate`` gets ``eval_kwargs``.
        eval_kwargs: The arguments the hook did not take itself.
        also_valid_for: The sibling hook class (``DistEvalHook``): the message says when the
            argument belongs to it.

    Raises:
        ConfigArgumentError: An argument is unknown (with close matches).
    """
    evaluate = getattr(dataset, "evaluate", None)
    if not eval_kwargs or evaluate is None:  # no evaluate: EvalHook.evaluate says so if used
        return
    try:
        params = list(inspect.signature(evaluate).parameters.values())
    except (TypeError, ValueError):
        return
    kind = inspect.Parameter
    if any(p.kind == kind.VAR_KEYWORD for p in params):
        return
    # The first parameter receives the results and ``logger`` the runner's logger, both
    # from the hook.
    by_name = (kind.POSITIONAL_OR_KEYWORD, kind.KEYWORD_ONLY)
    evaluate_args = [p.name for p in params[1:] if p.kind in by_name and p.name != "logger"]
    unknown = [key for key in eval_kwargs if key not in evaluate_args]
    if not unknown:
        return
    name = hook_cls.__name__
    hook_args = [a for a in _named_args(hook_cls) if a != "dataloader"]
    listed = (
        f"{name}: {', '.join(hook_args)}; {type(dataset).__name__}.evaluate (gets the "
        f"others): {', '.join(evaluate_args) or 'none'}"
    )
    key = unknown[0]
    err = unexpected_argument_error(name, key, hook_args + evaluate_args, listed)
    if key in _named_args(also_valid_for) and key not in hook_args:
        raise ConfigArgumentError(
            f"{err}. ({key} is an argument of {also_valid_for.__name__}, which distributed "
            "runs use.)"
        )
    raise err


def _named_args(cls: type) -> list[str]:
    """The arguments of ``cls(...)`` that can be passed by name, in order."""
    by_name = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [n for n, p in inspect.signature(cls).parameters.items() if p.kind in by_name]


def with_keyword_args_before(base: Callable, extra: Callable, before: str) -> inspect.Signature:
    """Return ``base``'s signature with ``extra``'s keyword-only arguments before ``before``.

    The inserted arguments become positional-or-keyword: this is how ``DistEvalHook``, whose own
    ``__init__`` takes its three arguments by keyword, shows mmcv's positional order.

    Args:
        base: The function whose signature is extended (``EvalHook.__init__``).
        extra: The function whose keyword-only arguments are inserted.
        before: The argument of ``base`` they are inserted before.
    """
    kind = inspect.Parameter
    own = [
        p.replace(kind=kind.POSITIONAL_OR_KEYWORD)
        for p in inspect.signature(extra).parameters.values()
        if p.kind == kind.KEYWORD_ONLY
    ]
    signature = inspect.signature(base)
    params = list(signature.parameters.values())
    at = list(signature.parameters).index(before)
    return signature.replace(parameters=params[:at] + own + params[at:])
