"""``python -m mmpar.cli.work_dir_check CONFIG [train.py flags]``: is the run's work dir free?

``tools/dist_train.sh`` runs it on a single node before it starts torchrun. Under torchrun a
held work dir stops every rank with one ``error:`` line each, but torchrun then prints its own
failure report of some 40 lines below them; checked before the launch, the line is the last
one printed (exit code 2) and torchrun never starts.

It finds the work dir as ``tools/train.py`` does (``--work-dir``, else the config's
``work_dir`` after ``--cfg-options``, else ``work_dirs/<config name>``) and reads only the lock
(see :func:`mmpar.runner.work_dir_guard.lock.check_not_locked`). Anything else it cannot make
sense of (a missing config, a bad flag) it leaves to ``tools/train.py``, which says what is
wrong.

:func:`check_training_command` is the same check, plus the refusal of a new run over another
run's checkpoints, for the zero-edit launcher (:mod:`mmpar.as_mmcv`): a project's own
``tools/train.py`` writes its config dump and log file into the work dir before it builds the
runner, so the runner's own refusal (``runner.run``) would come after those writes and about a
hundred lines of set-up output. Checked before the program starts, the refusal is the only line
printed and nothing is written. ``runner.run`` still checks (it is the authority): this is the
early, quiet form for the commands it can read.
"""

from __future__ import annotations

import argparse
import sys

from mmpar.runner.work_dir_guard import program_options
from mmpar.runner.work_dir_guard.lock import WorkDirLockedError, check_not_locked
from mmpar.runner.work_dir_guard.run_mixing import check_new_run_work_dir
from mmpar.utils import Config, DictAction

from .args import train_work_dir

# Options with which a project's tools/train.py continues a run (mmcls, mmdet, mmseg, ...).
RESUME_OPTIONS = ("--resume-from", "--resume", "--auto-resume")


class _QuietParser(argparse.ArgumentParser):
    """Raises instead of printing a usage message (the flags are tools/train.py's to judge)."""

    def error(self, message: str):
        raise ValueError(message)


def work_dir_of(argv: list[str]) -> str | None:
    """The work dir ``tools/train.py argv`` would use, or None when it cannot be told."""
    planned = _planned_run(argv)
    return None if planned is None else planned[0]


def _planned_run(argv: list[str]) -> tuple[str, Config | None] | None:
    """``(work dir, config)`` of ``tools/train.py argv`` (config None when not read)."""
    parser = _QuietParser(add_help=False)
    parser.add_argument("config")
    parser.add_argument("--work-dir")
    parser.add_argument("--cfg-options", nargs="+", action=DictAction, default={})
    try:
        args, _ = parser.parse_known_args(argv)
    except (ValueError, SystemExit):  # a bad command line: tools/train.py reports it
        return None
    try:
        cfg = Config.fromfile(args.config, import_custom_modules=False)
        if args.cfg_options:
            cfg.merge_from_dict(args.cfg_options)
    except Exception:  # a broken config: tools/train.py names the problem
        return (args.work_dir, None) if args.work_dir is not None else None
    return train_work_dir(args.work_dir, cfg, args.config), cfg


def check_training_command(argv: list[str]) -> None:
    """Refuse, before it starts, a training command that ``runner.run`` would refuse.

    Only for a program that takes a resume option (``--resume-from``, ``--resume`` or
    ``--auto-resume`` quoted in its main script: a training script; ``tools/test.py`` takes
    none). A command that passes one of them, or whose config sets ``resume_from`` or
    ``auto_resume``, continues a run and only meets the lock check.

    Args:
        argv: The program's arguments after the script (``sys.argv[1:]``).

    Raises:
        WorkDirLockedError: Another run holds the work dir.
        WorkDirHasOtherRunError: A new run in a work dir that holds checkpoints.
    """
    if not any(program_options.accepts(option) for option in RESUME_OPTIONS):
        return
    planned = _planned_run(argv)
    if planned is None:
        return
    work_dir, cfg = planned
    check_not_locked(work_dir)
    flags = {arg.split("=", 1)[0] for arg in argv}
    resuming = bool(flags.intersection(RESUME_OPTIONS))
    if cfg is not None:
        resuming = resuming or bool(cfg.get("resume_from") or cfg.get("auto_resume"))
    # The config text is the program's to make (it adds keys before storing it): not compared.
    check_new_run_work_dir(work_dir, None, resuming)


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
