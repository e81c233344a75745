"""Decorators that guard a call: prerequisites (packages, executables) and renamed arguments.

These are mmcv 1.x's ``check_prerequisites``, ``requires_package``, ``requires_executable``
and ``deprecated_api_warning`` (importable from :mod:`mmpar.utils.misc` as in mmcv).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import shutil
import warnings
from typing import Any, Callable, Union

from .compat_errors import CheckTypeError

_DEFAULT_MSG = (
    'Prerequisites "{}" are required in method "{}" but not found, please install them first.'
)


def check_prerequisites(
    prerequisites: Union[str, list[str]],
    checker: Callable[[str], bool],
    msg_tmpl: str = _DEFAULT_MSG,
) -> Callable[[Callable], Callable]:
    """Return a decorator that checks ``prerequisites`` each time the function is called.

    Args:
        prerequisites: A prerequisite name or a list of them.
        checker: Returns True if the prerequisite it is given is met.
        msg_tmpl: Message template; ``{}`` twice: the missing names, the function's name.

    Returns:
        The decorator. When a prerequisite is missing, the decorated function prints the
        message to stdout (as mmcv does; code and tests written for mmcv read it there) and
        raises :class:`RuntimeError` carrying the same message, instead of running.
    """
    names = [prerequisites] if isinstance(prerequisites, str) else list(prerequisites)

    def decorator(func: Callable) -> Callable:
        @functools.wraps(func)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            missing = [name for name in names if not checker(name)]
            if missing:
                message = msg_tmpl.format(", ".join(missing), func.__name__)
                print(message)
                raise RuntimeError(f"Prerequisites not met: {message}")
            return func(*args, **kwargs)

        return guarded

    return decorator


def _package_importable(package: str) -> bool:
    try:
        importlib.import_module(package)
    except ImportError:
        return False
    return True


def _executable_found(cmd: str) -> bool:
    return shutil.which(cmd) is not None


def requires_package(prerequisites: Union[str, list[str]]) -> Callable[[Callable], Callable]:
    """Return a decorator: the function raises RuntimeError unless the packages import.

    Args:
        prerequisites: A module name or a list of them.

    Returns:
        The decorator (see :func:`check_prerequisites`).
    """
    return check_prerequisites(prerequisites, checker=_package_importable)


def requires_executable(prerequisites: Union[str, list[str]]) -> Callable[[Callable], Callable]:
    """Return a decorator: the function raises RuntimeError unless the executables are on PATH.

    Args:
        prerequisites: An executable's name or a list of them.

    Returns:
        The decorator (see :func:`check_prerequisites`).
    """
    return check_prerequisites(prerequisites, checker=_executable_found)


def deprecated_api_warning(
    name_dict: dict[str, str], cls_name: str | None = None
) -> Callable[[Callable], Callable]:
    """Return a decorator that accepts renamed keyword arguments under their old names.

    A keyword argument passed by an old name is renamed to the new one and a
    :class:`DeprecationWarning` names both. A positional argument that fills a parameter
    still named by an old name also warns.

    Args:
        name_dict: Old argument name → new argument name.
        cls_name: Class name to show in the warning as ``cls_name.func_name``.

    Returns:
        The decorator.

    Raises:
        TypeError: (from the decorated call) both the old and the new name were passed;
            also an AssertionError, as in mmcv.
    """

    def decorator(old_func: Callable) -> Callable:
        positional_names = inspect.getfullargspec(old_func).args
        func_name = old_func.__name__ if cls_name is None else f"{cls_name}.{old_func.__name__}"

        def warn(old: str, new: str) -> None:
            warnings.warn(
                f'"{old}" is deprecated in `{func_name}`, please use "{new}" instead',
                DeprecationWarning,
                stacklevel=3,
            )

        @functools.wraps(old_func)
        def renaming(*args: Any, **kwargs: Any) -> Any:
            filled = positional_names[: len(args)]
            for old, new in name_dict.items():
                if old in filled:
                    warn(old, new)
                if old in kwargs:
                    if new in kwargs:
                        raise CheckTypeError(
                            f"{func_name}() got both the deprecated argument {old!r} and its "
                            f"replacement {new!r}; pass only {new!r}"
                        )
                    warn(old, new)
                    kwargs[new] = kwargs.pop(old)
            return old_func(*args, **kwargs)

        return renaming

    return decorator


__all__ = [
    "check_prerequisites",
    "deprecated_api_warning",
    "requires_executable",
    "requires_package",
]
