"""One run per work dir: now kept by the runner (:mod:`mmpar.runner.work_dir_guard.lock`).

This module keeps the names importable from their former place.
"""

from mmpar.runner.work_dir_guard.lock import (
    LOCK_FILE_NAME,
    WorkDirLock,
    WorkDirLockedError,
    check_not_locked,
    held_here,
    read_holder,
)

__all__ = [
    "LOCK_FILE_NAME",
    "WorkDirLock",
    "WorkDirLockedError",
    "check_not_locked",
    "held_here",
    "read_holder",
]
