"""A new run never mixes its checkpoints with another run's: now kept by the runner.

See :mod:`mmpar.runner.work_dir_guard.run_mixing`; this module keeps the names importable from
their former place.
"""

from mmpar.runner.work_dir_guard.run_mixing import WorkDirHasOtherRunError, check_new_run_work_dir

__all__ = ["WorkDirHasOtherRunError", "check_new_run_work_dir"]
