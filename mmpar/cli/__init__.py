"""The command-line tools (the top layer: nothing in mmpar imports it).

One module per command, each with ``main(argv=None) -> int``, installed as console scripts
(pyproject.toml) and run from a clone by the thin wrappers in ``tools/``: :mod:`~.train`
(``mmpar-train``), :mod:`~.test`, :mod:`~.infer`, :mod:`~.analyze_logs`, :mod:`~.print_config`,
:mod:`~.convert_sharded_checkpoint`, :mod:`~.port` (``mmpar-port``). They are not imported here,
so that ``import mmpar.cli`` stays as light as what they share:

- :mod:`~mmpar.cli.errors`: one ``error:`` line and an exit code instead of a traceback
  (:func:`user_errors`: exit code 2, :func:`environment_errors`: exit code 1).
- :mod:`~mmpar.cli.args`: the ``--trust-checkpoint`` flag, checks of ``--work-dir``/``--out``.
- :mod:`~mmpar.cli.launch`: ``--launcher`` (:func:`init_launcher`), :func:`on_rank_zero`,
  :func:`check_shared_work_dir` (multi-node).
- :mod:`~mmpar.cli.logfile`: a log file written only once the set-up succeeded, under a name
  no other run takes (:func:`new_log_name`).
- :mod:`~mmpar.cli.workdir_lock`: one run per work dir (:class:`WorkDirLock`).
- :mod:`~mmpar.cli.summary`: the lines printed when a training run ends.
- :mod:`~mmpar.cli.packaged_configs`: the example configs shipped in the wheel, by name.
"""

from .args import (
    add_trust_checkpoint_argument,
    check_checkpoint_path,
    check_output_file,
    check_work_dir,
)
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
from .launch import check_shared_work_dir, init_launcher, on_rank_zero
from .logfile import DeferredLogFile, new_log_name
from .summary import format_summary, report_summary, run_status
from .workdir_lock import LOCK_FILE_NAME, WorkDirLock, WorkDirLockedError

__all__ = [
    "ENVIRONMENT_ERRORS",
    "LOCK_FILE_NAME",
    "TRUST_CHECKPOINT_FLAG",
    "TRUST_CHECKPOINT_HINT",
    "USER_ERRORS",
    "DeferredLogFile",
    "UsageError",
    "WorkDirLock",
    "WorkDirLockedError",
    "add_trust_checkpoint_argument",
    "check_checkpoint_path",
    "check_output_file",
    "check_shared_work_dir",
    "check_work_dir",
    "environment_errors",
    "error_message",
    "fail",
    "format_summary",
    "init_launcher",
    "new_log_name",
    "on_rank_zero",
    "report_summary",
    "run_status",
    "user_errors",
]
