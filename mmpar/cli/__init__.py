"""What the command-line tools in ``tools/`` share (the top layer: nothing in mmpar imports it).

- :mod:`~mmpar.cli.errors`: one ``error:`` line and an exit code instead of a traceback
  (:func:`user_errors`: exit code 2, :func:`environment_errors`: exit code 1).
- :mod:`~mmpar.cli.args`: the ``--trust-checkpoint`` flag, checks of ``--work-dir``/``--out``.
- :mod:`~mmpar.cli.launch`: ``--launcher`` (:func:`init_launcher`).
- :mod:`~mmpar.cli.logfile`: a log file written only once the set-up succeeded.
"""

from .args import add_trust_checkpoint_argument, check_output_file, check_work_dir
from .errors import (
    ENVIRONMENT_ERRORS,
    TRUST_CHECKPOINT_FLAG,
    TRUST_CHECKPOINT_HINT,
    USER_ERRORS,
    UsageError,
    environment_errors,
    error_message,
    fail,
    user_errors,
)
from .launch import init_launcher
from .logfile import DeferredLogFile

__all__ = [
    "ENVIRONMENT_ERRORS",
    "TRUST_CHECKPOINT_FLAG",
    "TRUST_CHECKPOINT_HINT",
    "USER_ERRORS",
    "DeferredLogFile",
    "UsageError",
    "add_trust_checkpoint_argument",
    "check_output_file",
    "check_work_dir",
    "environment_errors",
    "error_message",
    "fail",
    "init_launcher",
    "user_errors",
]
