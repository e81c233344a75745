"""Paths a run records about its own files: kept relative to its work dir, acted on only inside.

A work dir is copied (to branch an experiment) or moved, and the copy resumed. Any absolute path
the original run recorded (the best checkpoint in ``meta['hook_msgs']``, the checkpoint a run
resumed from) then points into the *original* work dir; a run acting on it would delete or
overwrite another experiment's files. So such paths are written relative to the work dir, read
back relative to the work dir of the run that reads them, and a path (old absolute records
included) is deleted or replaced only when it lies inside the directory the run writes to.
"""

from __future__ import annotations

import os

__all__ = ["is_inside", "resolve_recorded", "to_recorded"]


def is_inside(path: str, directory: str) -> bool:
    """Whether ``path`` is ``directory`` itself or lies below it (symlinks resolved).

    Args:
        path: A file or directory path; it need not exist.
        directory: The directory to test against.
    """
    real_path = os.path.realpath(path)
    real_dir = os.path.realpath(directory)
    try:
        return os.path.commonpath([real_path, real_dir]) == real_dir
    except ValueError:  # different drives (Windows)
        return False


def to_recorded(path: str | None, work_dir: str | None) -> str | None:
    """The form of ``path`` to record in a checkpoint or run record: relative to ``work_dir``.

    A path outside ``work_dir`` (an ``out_dir`` the user chose elsewhere), or any path when
    there is no work dir, is recorded unchanged.
    """
    # A relative ``path`` is relative to the current directory, as the runner made it.
    if not path or not work_dir or not is_inside(path, work_dir):
        return path
    return os.path.relpath(os.path.realpath(path), os.path.realpath(work_dir))


def resolve_recorded(path: str | None, work_dir: str | None) -> str | None:
    """The path a recorded ``path`` names for a run in ``work_dir``.

    A relative record is joined to ``work_dir``; an absolute one (older checkpoints, or an
    ``out_dir`` outside the work dir) is returned as it is: callers act on it only if
    :func:`is_inside` the directory they write to.
    """
    if not path or not work_dir or os.path.isabs(path):
        return path
    return os.path.join(work_dir, path)
