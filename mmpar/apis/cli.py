"""Shared plumbing of the command-line tools in ``tools/``: one-line errors for user mistakes."""

from __future__ import annotations

import sys
from typing import Callable, TypeVar

T = TypeVar("T")


class UsageError(Exception):
    """The command line or the environment is wrong in a way the user must fix."""


# Errors that mean "the command or the config is wrong" when raised while setting a run up.
USER_ERRORS = (FileNotFoundError, KeyError, ValueError, ImportError, UsageError)


def error_message(err: BaseException) -> str:
    """The text of ``err``; a KeyError's ``str()`` adds quotes, which are dropped."""
    if isinstance(err, KeyError) and len(err.args) == 1:
        return str(err.args[0])
    return str(err)


def fail(err: BaseException) -> int:
    """Print ``error: <message>`` to stderr and return exit code 2."""
    print(f"error: {type(err).__name__}: {error_message(err)}", file=sys.stderr)
    return 2


def init_launcher(launcher: str, dist_params: dict) -> bool:
    """Initialise the process group for ``launcher`` (unless ``'none'``).

    Returns:
        Whether the run is distributed.

    Raises:
        UsageError: The launcher's environment is missing (e.g. ``--launcher pytorch`` outside
            torchrun); the message says which variables and how to launch.
    """
    if launcher == "none":
        return False
    from mmpar.runner.dist_utils import init_dist

    try:
        init_dist(launcher, **dist_params)
    except RuntimeError as err:
        raise UsageError(f"--launcher {launcher}: {err}") from err
    return True


def run_setup(fn: Callable[[], T]) -> T:
    """Call ``fn``; turn user errors into a one-line message and ``SystemExit(2)``.

    Other exceptions keep their traceback (they are bugs, not usage mistakes).
    """
    try:
        return fn()
    except USER_ERRORS as err:
        raise SystemExit(fail(err)) from None
