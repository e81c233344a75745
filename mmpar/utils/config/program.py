"""The program's config: the one loaded from a file named on the command line.

The runner's own guarantees (:mod:`mmpar.runner.work_dir_guard`) read a key or two of the
config the program runs with (``preemption = None`` turns the preemption save off) also when
the program is not mmpar's, e.g. a project's own ``tools/train.py`` that loads its config with
``Config.fromfile(args.config)`` and never hands it to the runner. :meth:`Config.fromfile
<mmpar.utils.config.Config.fromfile>` remembers the last config it loaded from a file that is
an argument of ``sys.argv`` (so ``_base_`` files and configs a program loads for other
purposes do not count), as the object itself: ``--cfg-options`` merged into it later are seen.
"""

from __future__ import annotations

import os.path as osp
import sys
from typing import Any

_program_config: Any = None


def remember_if_program_config(path: str, cfg: Any) -> None:
    """Record ``cfg`` (loaded from ``path``) when ``path`` is one of the command-line arguments."""
    global _program_config
    for arg in sys.argv[1:]:
        if isinstance(arg, str) and arg and not arg.startswith("-") and osp.abspath(arg) == path:
            _program_config = cfg
            return


def program_config() -> Any:
    """The config the program loaded from a file named on its command line, or None."""
    return _program_config


__all__ = ["program_config", "remember_if_program_config"]
