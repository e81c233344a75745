"""Shared plumbing of the command-line tools in ``tools/``: one-line errors for user mistakes.

A tool sets its run up first (config, launcher, model, data, runner, checkpoints) and only then
writes into the work dir, so that a bad input ends with one ``error: ...`` line, exit code 2
and an unchanged work dir. Errors while running keep their traceback (exit code 1).
"""

from __future__ import annotations

import logging
import os
import os.path as osp
import sys
from typing import Callable, TypeVar

from mmpar.runner.checkpoint import CheckpointError, UnsafeCheckpointError
from mmpar.utils.registry import ConfigArgumentError

T = TypeVar("T")


class UsageError(Exception):
    """The command line or the environment is wrong in a way the user must fix."""


# Errors that mean "the command, the config or an input file is wrong" when raised while
# setting a run up. ConfigArgumentError is the TypeError of a config argument a type does not
# take; CheckpointError covers corrupt, unsafe and mismatching checkpoints.
USER_ERRORS = (
    FileNotFoundError,
    PermissionError,
    KeyError,
    ValueError,
    ImportError,
    UsageError,
    ConfigArgumentError,
    CheckpointError,
)

TRUST_CHECKPOINT_HINT = (
    " On the command line, add --trust-checkpoint to load it with weights_only=False "
    "(only for files you trust)."
)


def error_message(err: BaseException) -> str:
    """The text of ``err``; a KeyError's ``str()`` adds quotes, which are dropped."""
    if isinstance(err, KeyError) and len(err.args) == 1:
        return str(err.args[0])
    text = str(err)
    if isinstance(err, UnsafeCheckpointError):
        text += TRUST_CHECKPOINT_HINT
    return text


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


def check_work_dir(path: str) -> None:
    """Check that ``path`` can be (or become) a writable directory, without creating it.

    Raises:
        UsageError: ``path`` is not a directory, or it (or the nearest existing directory
            above it, when it does not exist yet) is not writable by this process.
    """
    path = osp.abspath(path)
    existing = path
    while not osp.exists(existing) and osp.dirname(existing) != existing:
        existing = osp.dirname(existing)
    what = "work_dir" if existing == path else f'cannot create work_dir "{path}":'
    if not osp.isdir(existing):
        raise UsageError(
            f'{what} "{existing}" is not a directory (a file is in the way); '
            "choose another --work-dir"
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(
            f'{what} "{existing}" is not writable by this user; choose another --work-dir'
        )


class DeferredLogFile(logging.Handler):
    """Hold a logger's records in memory until its log file may be written.

    A tool attaches it before the setup, so a setup that fails writes no log file; once the
    setup succeeded, :meth:`open` creates the log file and writes the held records first.

    Args:
        logger_name: Name of the logger whose records are held.
    """

    def __init__(self, logger_name: str = "mmpar") -> None:
        super().__init__()
        self.logger = logging.getLogger(logger_name)
        self.records: list[logging.LogRecord] = []
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        """Hold ``record``."""
        self.records.append(record)

    def open(self, log_file: str, log_level: int | str = logging.INFO) -> None:
        """Create ``log_file`` (rank 0 only), write the held records into it, stop holding."""
        from mmpar.utils import get_logger

        self.detach()
        get_logger(self.logger.name, log_file=log_file, log_level=log_level)
        path = osp.abspath(log_file)
        for handler in self.logger.handlers:
            if isinstance(handler, logging.FileHandler) and handler.baseFilename == path:
                for record in self.records:
                    handler.handle(record)
        self.records.clear()

    def detach(self) -> None:
        """Stop holding records (the held ones are kept until :meth:`open` or deletion)."""
        self.logger.removeHandler(self)


def run_setup(fn: Callable[[], T]) -> T:
    """Call ``fn``; turn user errors into a one-line message and ``SystemExit(2)``.

    Other exceptions keep their traceback (they are bugs, not usage mistakes).
    """
    try:
        return fn()
    except USER_ERRORS as err:
        raise SystemExit(fail(err)) from None
