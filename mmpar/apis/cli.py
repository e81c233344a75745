"""Shared plumbing of the command-line tools in ``tools/``: one-line errors for user mistakes.

A tool sets its run up first (config, launcher, model, data, runner, checkpoints) and only then
writes into the work dir, so that a bad input ends with one ``error: ...`` line, exit code 2
and an unchanged work dir. Errors while running keep their traceback (exit code 1), except
those of the environment (a checkpoint that cannot be written: disk full, file-size limit),
which end with one ``error: ...`` line and exit code 1.
"""

from __future__ import annotations

import argparse
import logging
import os
import os.path as osp
import sys
from typing import Callable, TypeVar

from mmpar.runner.checkpoint import CheckpointError, CheckpointSaveError, UnsafeCheckpointError
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

# Errors of the environment met while running. They are not bugs, so a traceback would only
# distract, but not bad input either: exit code 1, not 2. Exit code 2 tells a script (or a
# scheduler) that the same command will fail again; here it finishes with --auto-resume once
# the disk has room again.
ENVIRONMENT_ERRORS = (CheckpointSaveError,)

TRUST_CHECKPOINT_FLAG = "--trust-checkpoint"
TRUST_CHECKPOINT_HINT = (
    f" On the command line, add {TRUST_CHECKPOINT_FLAG} to load it with weights_only=False "
    "(only for files you trust)."
)


def add_trust_checkpoint_argument(
    parser: argparse.ArgumentParser, what: str = "the checkpoint"
) -> None:
    """Add the ``--trust-checkpoint`` flag that :data:`TRUST_CHECKPOINT_HINT` recommends.

    Args:
        parser: The tool's parser.
        what: What the flag loads, for its help text (e.g. ``'--resume-from/--load-from'``).
    """
    parser.add_argument(
        TRUST_CHECKPOINT_FLAG,
        action="store_true",
        help=f"load {what} with weights_only=False: unpickling may run code from the file, "
        "so only for checkpoints you trust (see docs/security.md)",
    )


def error_message(err: BaseException) -> str:
    """The text of ``err``; a KeyError's ``str()`` adds quotes, which are dropped."""
    if isinstance(err, KeyError) and len(err.args) == 1:
        return str(err.args[0])
    text = str(err)
    if isinstance(err, UnsafeCheckpointError):
        text += TRUST_CHECKPOINT_HINT
    return text


def fail(err: BaseException, code: int = 2) -> int:
    """Print ``error: <Type>: <message>`` to stderr and return ``code``."""
    print(f"error: {type(err).__name__}: {error_message(err)}", file=sys.stderr)
    return code


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


def check_output_file(path: str) -> None:
    """Check that ``--out path`` can be written, before the work whose result it receives.

    Raises:
        UsageError: ``path`` is a directory, or its directory is missing or not writable.
    """
    folder = osp.dirname(osp.abspath(path))
    if osp.isdir(path):
        raise UsageError(f"--out {path}: is a directory; give a file name")
    if not osp.isdir(folder):
        raise UsageError(f"--out {path}: the directory {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"--out {path}: the directory {folder} is not writable by this user")


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


def run_main(fn: Callable[[], T]) -> T:
    """Call ``fn`` (a tool's work after its setup); environment errors become one line.

    An error of :data:`ENVIRONMENT_ERRORS` (e.g. :class:`CheckpointSaveError`) is printed as
    ``error: <Type>: <message>`` and ends the process with ``SystemExit(1)``; other exceptions
    keep their traceback.
    """
    try:
        return fn()
    except ENVIRONMENT_ERRORS as err:
        raise SystemExit(fail(err, code=1)) from None
