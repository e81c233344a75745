"""``python -m mmpar.cli.work_dir_check CONFIG [train.py flags]``: is the run's work dir free?

``tools/dist_train.sh`` runs it on a single node before it starts torchrun. Under torchrun a
held work dir stops every rank with one ``error:`` line each, but torchrun then prints its own
failure report of some 40 lines below them; checked before the launch, the line is the last
one printed (exit code 2) and torchrun never starts.

It finds the work dir as ``tools/train.py`` does (``--work-dir``, else the config's
``work_dir`` after ``--cfg-options``, else ``work_dirs/<config name>``) and reads only the lock
(see :func:`mmpar.cli.workdir_lock.check_not_locked`). Anything else it cannot make sense of
(a missing config, a bad flag) it leaves to ``tools/train.py``, which says what is wrong.
"""

from __future__ import annotations

import argparse
import sys

from mmpar.utils import Config, DictAction

from .args import train_work_dir
from .workdir_lock import WorkDirLockedError, check_not_locked


class _QuietParser(argparse.ArgumentParser):
    """Raises instead of printing a usage message (the flags are tools/train.py's to judge)."""

    def error(self, message: str):
        raise ValueError(message)


def work_dir_of(argv: list[str]) -> str | None:
    """The work dir ``tools/train.py argv`` would use, or None when it cannot be told."""
    parser = _QuietParser(add_help=False)
    parser.add_argument("config")
    parser.add_argument("--work-dir")
    parser.add_argument("--cfg-options", nargs="+", action=DictAction, default={})
    try:
        args, _ = parser.parse_known_args(argv)
    except (ValueError, SystemExit):  # a bad command line: tools/train.py reports it
        return None
    if args.work_dir is not None:
        return args.work_dir
    try:
        cfg = Config.fromfile(args.config, import_custom_modules=False)
        if args.cfg_options:
            cfg.merge_from_dict(args.cfg_options)
    except Exception:  # a broken config: tools/train.py names the problem
        return None
    return train_work_dir(None, cfg, args.config)


def main(argv: list[str] | None = None) -> int:
    """Return 2 after one ``error:`` line if another run holds the work dir, else 0."""
    work_dir = work_dir_of(sys.argv[1:] if argv is None else argv)
    if work_dir is None:
        return 0
    try:
        check_not_locked(work_dir)
    except WorkDirLockedError as err:
        print(f"error: WorkDirLockedError: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
