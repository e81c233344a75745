"""How a tool ends on an error it expects: one ``error: <Type>: <message>`` line and an exit code.

Wrap a tool's set-up in :func:`user_errors` and its work in :func:`environment_errors`::

    with user_errors():          # bad config, input file, checkpoint or flag: exit code 2
        cfg, model = setup(args)
    with environment_errors():   # a checkpoint that cannot be written: exit code 1
        runner.run(data_loaders, cfg.workflow)

Exit code 2 tells a script (or a scheduler) that the same command will fail again; exit code 1
with one line is an environment problem that is not a bug (disk full, file-size limit): the run
finishes with ``--auto-resume`` once the disk has room again. Any other exception keeps its
traceback: it is a bug, not a mistake of the user.
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager, contextmanager
from typing import Iterator

from mmpar.runner.checkpoint import CheckpointError, CheckpointSaveError, UnsafeCheckpointError
from mmpar.runner.model_setup.compile import CompileBackendError
from mmpar.utils import compat_errors
from mmpar.utils.config.errors import ConfigCodeError
from mmpar.utils.registry import ConfigArgumentError
from mmpar.utils.usage_error import UsageError

# Errors that mean "the command, the config or an input file is wrong" when raised while
# setting a run up. ConfigArgumentError is the TypeError of a config argument a type does not
# take; CheckpointError covers corrupt, unsafe and mismatching checkpoints; ConfigCodeError is
# whatever a config file's own code raised (1/0, os.environ['UNSET']), naming its file and line.
USER_ERRORS = (
    ConfigCodeError,
    FileNotFoundError,
    PermissionError,
    KeyError,
    ValueError,
    ImportError,
    UsageError,
    ConfigArgumentError,
    CheckpointError,
)

# Errors of the environment met while running: not bugs, so a traceback would only distract,
# but not bad input either (exit code 1, not 2). CompileBackendError: the torch.compile
# backend cannot compile here (e.g. inductor without a C++ compiler), met at the first step.
ENVIRONMENT_ERRORS = (CheckpointSaveError, CompileBackendError)

TRUST_CHECKPOINT_FLAG = "--trust-checkpoint"
TRUST_CHECKPOINT_HINT = (
    f" On the command line, add {TRUST_CHECKPOINT_FLAG} to load it with weights_only=False "
    "(only for files you trust)."
)


def error_message(err: BaseException) -> str:
    """The text of ``err`` for the ``error:`` line.

    A KeyError's ``str()`` adds quotes, which are dropped; an unsafe checkpoint's message gets
    the hint to add ``--trust-checkpoint``.
    """
    if isinstance(err, KeyError) and len(err.args) == 1:
        return str(err.args[0])
    text = str(err)
    if isinstance(err, UnsafeCheckpointError):
        text += TRUST_CHECKPOINT_HINT
    return text


def error_type_name(err: BaseException) -> str:
    """The type named on the ``error:`` line.

    The mmcv-compatibility types (``CheckValueError`` is a ValueError that is also mmcv's
    AssertionError) exist only for ``except`` clauses; the user is shown the plain built-in type.
    """
    for cls in type(err).__mro__:
        if cls.__module__ != compat_errors.__name__:
            return cls.__name__
    return type(err).__name__


def fail(err: BaseException, code: int = 2) -> int:
    """Print ``error: <Type>: <message>`` to stderr and return ``code``."""
    print(f"error: {error_type_name(err)}: {error_message(err)}", file=sys.stderr)
    return code


@contextmanager
def _exit_on(errors: tuple[type[BaseException], ...], code: int) -> Iterator[None]:
    """Turn ``errors`` raised in the block into one ``error:`` line and ``SystemExit(code)``."""
    try:
        yield
    except errors as err:
        raise SystemExit(fail(err, code)) from None


def user_errors() -> AbstractContextManager[None]:
    """A block that sets a run up: a user error in it ends the process with exit code 2.

    An error of :data:`USER_ERRORS` (bad flag, config, input file or checkpoint) is printed as
    one ``error: <Type>: <message>`` line on stderr and raises ``SystemExit(2)``; other
    exceptions pass unchanged, with their traceback.
    """
    return _exit_on(USER_ERRORS, 2)


def environment_errors() -> AbstractContextManager[None]:
    """A block that does a tool's work: an environment error in it ends with exit code 1.

    An error of :data:`ENVIRONMENT_ERRORS` (e.g. :class:`CheckpointSaveError`: disk full) is
    printed as one ``error: <Type>: <message>`` line on stderr and raises ``SystemExit(1)``;
    other exceptions pass unchanged, with their traceback.
    """
    return _exit_on(ENVIRONMENT_ERRORS, 1)
