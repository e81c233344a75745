"""Arguments of config-built callables: their errors, checks, and the config key in messages.

:func:`check_argument_names` and :func:`check_argument_types` check a config dict's keyword
arguments against the signature of what it builds, before it is called;
:func:`config_error_context` puts the config key at fault in front of an error's message.
"""

from __future__ import annotations

import contextlib
import difflib
import inspect
from collections.abc import Iterator, Sequence
from typing import Any

from .arg_types import describe, describe_value, first_mismatch
from .config.key_reads import note_read


class ConfigArgumentError(TypeError):
    """A config dict passes an argument its ``type`` does not accept, or misses a required one.

    The message names the registry, the type and the argument (with close matches).
    """


class ConfigArgumentTypeError(ConfigArgumentError, AssertionError):
    """A config value whose type the annotation of its argument refuses.

    ``str()`` is ``'<key> <detail>'``, e.g. ``"lr must be float | Tensor for SGD, got str
    'fast'"``; :func:`config_error_context` puts the config key in front of ``key``
    (``optimizer.lr``). Also an ``AssertionError``: mmcv 1.x's constructors assert types.

    Args:
        message: The whole message, used when ``key`` is None.
        key: The argument's config key relative to where it was built (``'lr'``).
        detail: What was expected and what was given.
        from_default: The value came from ``default_args``, not from the config dict itself.
    """

    def __init__(
        self,
        message: str = "",
        *,
        key: str | None = None,
        detail: str | None = None,
        from_default: bool = False,
    ) -> None:
        super().__init__(f"{key} {detail}" if key is not None else message)
        self.key, self.detail, self.from_default = key, detail, from_default

    def under(self, prefix: str) -> ConfigArgumentTypeError:
        """The same error with its key under ``prefix`` (``'custom_hooks'`` + ``'[1].x'``)."""
        sep = "" if self.key.startswith("[") or not prefix else "."
        return ConfigArgumentTypeError(
            key=f"{prefix}{sep}{self.key}", detail=self.detail, from_default=self.from_default
        )


def check_argument_types(obj: Any, args: dict, defaults: Sequence[str] = ()) -> None:
    """Raise :class:`ConfigArgumentTypeError` if a value in ``args`` does not fit ``obj``.

    Checks against the annotations of ``obj``'s signature (see :mod:`mmpar.utils.arg_types`);
    arguments a ``**kwargs`` takes and unannotated ones are not checked.

    Args:
        obj: The class or function about to be called with ``**args``.
        args: Its keyword arguments, named by their config keys.
        defaults: The names in ``args`` that came from ``default_args`` (not the config).
    """
    bad = first_mismatch(obj, args)
    if bad is not None:
        name, annotation = bad
        owner = getattr(obj, "__name__", type(obj).__name__)
        detail = f"must be {describe(annotation)} for {owner}, got {describe_value(args[name])}"
        raise ConfigArgumentTypeError(key=name, detail=detail, from_default=name in defaults)


def _error_text(err: BaseException) -> str:
    """``str(err)`` without the quotes ``KeyError`` adds around its message."""
    if isinstance(err, KeyError) and len(err.args) == 1:
        return str(err.args[0])
    return str(err)


def unexpected_argument_error(
    where: str, key: str, valid: Sequence[str], valid_text: str | None = None
) -> ConfigArgumentError:
    """The error for an argument ``key`` that ``where`` does not accept, with close matches.

    Args:
        where: What rejects the argument, e.g. ``'SGD (registry "optimizer")'``.
        key: The argument.
        valid: The arguments ``where`` accepts; the closest ones to ``key`` are suggested.
        valid_text: How to list the valid arguments (default: ``valid``, comma-separated).

    Returns:
        ``ConfigArgumentError('<where>: unexpected keyword argument "<key>". Did you mean:
        ...? Valid arguments: ...')`` (without the hint when nothing is close).
    """
    close = difflib.get_close_matches(str(key), list(valid), n=3, cutoff=0.6)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    listed = ", ".join(valid) if valid_text is None else valid_text
    return ConfigArgumentError(
        f'{where}: unexpected keyword argument "{key}".{hint} Valid arguments: {listed}'
    )


def check_argument_names(obj_cls: Any, args: dict, where: str) -> None:
    """Raise :class:`ConfigArgumentError` if ``obj_cls(**args)`` cannot bind its arguments.

    Objects whose signature cannot be read are not checked here; for those that take
    ``**kwargs`` only the required arguments are (``StepLrUpdaterHook`` needs ``step``).

    Args:
        obj_cls: The class or function about to be called with ``**args``.
        args: Its keyword arguments.
        where: Names it in the message, e.g. ``'SGD (registry "optimizer")'``.
    """
    for key in args:  # each is passed to the constructor: the option that set it was read
        note_read(key)
    try:
        params = inspect.signature(obj_cls).parameters
    except (TypeError, ValueError):
        return
    kinds = inspect.Parameter
    named = [
        n for n, p in params.items() if p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY)
    ]
    if not any(p.kind == kinds.VAR_KEYWORD for p in params.values()):
        for key in args:
            if key not in named:
                raise unexpected_argument_error(where, key, named)
    required = [
        n
        for n, p in params.items()
        if p.default is p.empty and p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY)
    ]
    missing = [n for n in required if n not in args]
    if missing:
        raise ConfigArgumentError(
            f"{where}: missing required argument(s) {', '.join(repr(m) for m in missing)}"
        )


@contextlib.contextmanager
def config_error_context(key: str) -> Iterator[None]:
    """Prefix configuration errors raised inside the block with ``'<key>: '``.

    Used where an object is built from one config key (``lr_config``, ``optimizer``, ...) so
    that the message names the key to fix. A :class:`ConfigArgumentTypeError` that knows its
    argument's key gets the joined key instead (``optimizer.lr: ...``). ``KeyError``,
    ``ValueError``, ``FileNotFoundError`` and :class:`ConfigArgumentError` are re-raised with
    the same type (chained); other exceptions pass through unchanged.

    Args:
        key: The config key, e.g. ``'log_config'``.
    """
    try:
        yield
    except ConfigArgumentTypeError as err:
        if err.key is None:
            raise ConfigArgumentTypeError(f"{key}: {err}") from err
        raise err.under(key) from err
    except (KeyError, ValueError, FileNotFoundError, ConfigArgumentError) as err:
        try:
            wrapped = type(err)(f"{key}: {_error_text(err)}")
        except Exception:
            raise err from None  # its constructor takes other arguments: keep it as it is
        raise wrapped from err


@contextlib.contextmanager
def config_item_context(key: str) -> Iterator[None]:
    """Put ``key`` in front of the key of a :class:`ConfigArgumentTypeError` raised in the block.

    For one item of a list of configs (``'[1]'`` of ``custom_hooks``, ``'hooks[0]'`` of
    ``log_config``), used inside the list's :func:`config_error_context`. Other errors pass
    unchanged, and so does a value that came from ``default_args``: it was given at the
    list's level (``log_config.interval``), not in the item.

    Args:
        key: The item's key relative to the enclosing config key.
    """
    try:
        yield
    except ConfigArgumentTypeError as err:
        if err.key is None or err.from_default:
            raise
        raise err.under(key) from err
