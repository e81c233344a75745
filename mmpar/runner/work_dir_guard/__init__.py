"""mmpar's guarantees, kept by the runner itself.

Every program that calls ``runner.run`` gets them (see :mod:`.guard`):

- :mod:`.lock`: one run per work dir (:class:`WorkDirLock`, an ``flock`` on ``.mmpar.lock``).
- :mod:`.run_mixing`: a new run never writes beside another run's checkpoints.
- :mod:`.program_options`: which options (``--auto-resume``, ``--resume-from``,
  ``--work-dir``) the running program accepts, so messages name what *it* takes.
- :mod:`.guard`: :class:`RunGuard`, what ``runner.run`` enters and leaves around a run (the
  two above, and the preemption / Ctrl-C save on by default).
"""

from .guard import (
    PREEMPTION_ENV,
    RunGuard,
    RunRefusedError,
    guarded_run,
    on_rank_zero,
    preemption_setting,
    set_preemption,
)
from .lock import LOCK_FILE_NAME, WorkDirLock, WorkDirLockedError, check_not_locked, read_holder
from .program_options import declare_options, options_declared, resume_action
from .run_mixing import WorkDirHasOtherRunError, check_new_run_work_dir

__all__ = [
    "LOCK_FILE_NAME",
    "PREEMPTION_ENV",
    "RunGuard",
    "RunRefusedError",
    "WorkDirHasOtherRunError",
    "WorkDirLock",
    "WorkDirLockedError",
    "check_new_run_work_dir",
    "check_not_locked",
    "declare_options",
    "guarded_run",
    "on_rank_zero",
    "options_declared",
    "preemption_setting",
    "read_holder",
    "resume_action",
    "set_preemption",
]
